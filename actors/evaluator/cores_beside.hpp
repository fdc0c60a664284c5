// The cores an evaluator's helper processes run on: its warm spares while
// they start (worker_pool.cpp) and the CPU stage's syntax checks and
// compiles (cpu_stage.cpp), so that none of them shares a core with a
// measurement (the CPU stage once ran on any core, the measuring one
// included). Who calls it: worker_pool.cpp and cpu_stage.cpp.
#pragma once

#include <vector>

namespace crucible::evaluator {

// The cores this process may use minus the measuring ones; the measuring
// ones where nothing else is left (a one-core machine); empty (any core)
// when measuring is empty (the measuring worker is not pinned either).
std::vector<int> cores_beside(const std::vector<int>& measuring);

}  // namespace crucible::evaluator
