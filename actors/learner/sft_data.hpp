// Stage 1's data: JSON Lines of {"prompt": "...", "completion": "..."}, one
// pair a line (blank lines skipped), tokenised with the policy's tokenizer:
// the prompt with special tokens (as generation sees it), the completion
// without, followed by the first eos token when the config has one.
// Read by `crucible learner` with objective "sft". Torch-free.
#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "actors/learner/rollout_batch.hpp"
#include "actors/policy/tokenizer.hpp"
#include "runtime/base/result.hpp"

namespace crucible::learner {

// not_found or io when unreadable; invalid_argument naming the file and line
// for bad JSON, a missing or non-string field, an empty prompt or completion,
// or text that is not UTF-8.
result<std::vector<sft_example>> read_sft_jsonl(const std::filesystem::path& path, const policy::tokenizer& tok,
                                                std::optional<std::int32_t> eos_token);

}  // namespace crucible::learner
