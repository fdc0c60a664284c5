// The kernels a run found: for each task, its best settled kernel. One
// selection for both readers: `crucible kernels export` (JSON lines in
// CUDA-L1's released format, so that the two can be compared with the same
// tools) and report.html's "Kernels found" table. Pure functions; any thread.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/cli/settlements_file.hpp"

namespace crucible::cli {

// For each task, the Success with the highest reward, chosen among the
// task's verified successes when it has any; equal rewards go to the one
// settled first (then the smaller candidate id). Tasks without a success are
// left out. Ordered as cuda_l1_less orders their task names.
std::vector<settled_row> best_kernels(const std::vector<settled_row>& rows);

// KernelBench's (level, task) of a task name whose last components are
// "levelL/N", "levelL/N_Name" or "levelL/N_Name.py" (KernelBench's files) or
// "LL-N" (CUDA-L1's and tools/gpu's short names), after any prefix
// ("a100/L1-19"); nullopt for other names ("cpu/gelu_tanh").
struct kernelbench_id {
  int level = 0, task = 0;
};
std::optional<kernelbench_id> kernelbench_id_of(const std::string& task);

// Task names ordered by (level, task) where both have one, those first;
// the others by text.
bool cuda_l1_less(const std::string& a, const std::string& b);

// The export's line for a kernel: CUDA-L1's level_id, task_id (null unless
// the name has a KernelBench id), ref_code (null when not known), custom_code
// (null when the row carries no code), score_default (the settled reward);
// then crucible's task, candidate_id, policy_version, found_unix (the
// settlement's time, seconds), found (the same in ISO 8601, UTC) and verified,
// in that order.
nlohmann::ordered_json kernel_line(const settled_row& best, const std::optional<std::string>& ref_code);

// "2025-01-02T03:04:05Z" for a wall-clock time in nanoseconds.
std::string iso_time(std::int64_t ns);

}  // namespace crucible::cli
