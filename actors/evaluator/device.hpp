// The device an evaluation runs on: "cpu" (a pinned core set) or "cuda:N"
// (one GPU, which the worker sees as its only device through
// CUDA_VISIBLE_DEVICES). Plain data and two checks; thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::evaluator {

struct device_spec {
  bool cuda = false;
  int index = 0;
  std::string text() const { return cuda ? "cuda:" + std::to_string(index) : "cpu"; }
  // What the worker passes to torch: it sees one GPU, always index 0.
  std::string torch_device() const { return cuda ? "cuda" : "cpu"; }
};

// "cpu", "cuda", "cuda:N". Errors: invalid_argument.
result<device_spec> parse_device(std::string_view text);

// Layer 1, dedicated device: on CUDA, refuses (errc::unavailable) while
// nvidia-smi lists a compute process on the GPU other than `own` (the
// evaluator's warm spare); unavailable too when nvidia-smi cannot be run.
// A listed process that has already exited (the worker of an evaluator
// just stopped, its context still being released) is waited for, up to
// 10 s, before the GPU counts as busy: on the H200 an evaluator started
// right after another was stopped met its worker so. CPU: always free.
status check_device_free(const device_spec& device, const std::vector<int>& own = {});

}  // namespace crucible::evaluator
