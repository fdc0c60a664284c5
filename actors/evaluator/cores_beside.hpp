// The cores an evaluator's helper processes run on: its warm spares while
// they start (worker_pool.cpp) and the CPU stage's syntax checks and
// compiles (cpu_stage.cpp), so that none of them shares a core with a
// measurement. On the H200 a launch-bound candidate (L2-14's folded GEMM,
// about 11 us a call) settled 1.29-1.30 instead of 1.37-1.39 in warm passes
// whose next jobs' CPU stage could run on the measuring core
// (docs/benchmarks.md).
#pragma once

#include <vector>

namespace crucible::evaluator {

// The cores this process may use minus the measuring ones; the measuring
// ones where nothing else is left (a one-core machine); empty (any core)
// when measuring is empty (the measuring worker is not pinned either).
std::vector<int> cores_beside(const std::vector<int>& measuring);

}  // namespace crucible::evaluator
