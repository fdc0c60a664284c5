// A policy folder for loops that must be cheap and must reach the
// evaluators: a Hugging Face checkpoint (config.json, tokenizer.json,
// model.safetensors) of a one-layer Llama whose every completion token is
// one of a few whole answers, each an added token of the tokenizer (for
// example a task's known faster variant in a ```python block, which the
// rollout extracts). The weights are made by hand, no LibTorch: attention
// and MLP are zero, so the last hidden state is the same for any prompt and
// the output head gives every answer token the same high logit (about
// 99.99% of the mass, shared evenly) and every byte token a low one.
// Written once by the multi-node test (tests/integration/multinode.test.cpp)
// and loaded by `crucible learner --policy` and `crucible rollout --model`.
#pragma once

#include <string>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::testing {

// Writes the folder at dir (created); the answers become token ids 256,
// 257, ... and the end-of-text token comes after them. Errors from writing
// the files, naming the path.
status write_answering_policy(const std::string& dir, const std::vector<std::string>& answers);

}  // namespace crucible::testing
