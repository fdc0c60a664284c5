// Where a rollout finds the weights of a published version, as a folder that
// policy::policy::load reads (config.json, safetensors, tokenizer.json): the
// learner's folder when it is complete, else a folder under weights_dir with
// the new safetensors and the original model's config and tokenizer files.
// A LoRA publication (weight_publisher.hpp) is a PEFT adapter folder
// instead, which the rollout applies onto its base (policy::load_adapters).
// Called by the rollout actor between groups; blocking file I/O.
#pragma once

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>

#include "runtime/base/result.hpp"

namespace crucible::rollout {

// A published folder (PolicyPublication.path). io naming the path when it
// holds no safetensors or the folder cannot be made.
result<std::filesystem::path> weights_folder(const std::filesystem::path& published, const std::filesystem::path& model,
                                             const std::string& weights_dir, const std::string& rollout,
                                             std::uint64_t version);

// Weights received as chunks (the bytes of one safetensors file). io when
// they cannot be written.
result<std::filesystem::path> unpack_weights(std::span<const std::uint8_t> safetensors,
                                             const std::filesystem::path& model, const std::string& weights_dir,
                                             const std::string& rollout, std::uint64_t version);

}  // namespace crucible::rollout
