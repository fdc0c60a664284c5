// Finding the code in a completion: the last fenced python block after the
// last `## Code Implementation` heading (the prompt's generation protocol,
// prompt.hpp). A completion without one is not a candidate: the rollout
// submits it with empty code, and the referee settles it as NoCode with
// reward 0 without sending it to an evaluator. Pure; any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace crucible::rollout {

struct extracted_code {
  std::optional<std::string> code;  // the block's contents, or nullopt
  std::string reason;               // why there is no code ("" when there is)
};

// A fence is a line starting with ``` (up to 3 spaces of indent); an opening
// fence's info word must be python, py, python3 or nothing (case-insensitive);
// blocks in other languages are skipped. A block still open at the end of the
// completion (cut by max_new_tokens) does not count. Reasons: "no code: no
// '## Code Implementation' section", "no code: no fenced python block after
// '## Code Implementation'", "no code: the code block is never closed",
// "no code: the code block is empty".
extracted_code extract_code(std::string_view completion);

}  // namespace crucible::rollout
