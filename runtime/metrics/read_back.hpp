// What a process reads back from its own registry: the sum of a counter
// family over its series. crucible run's progress line and summary.json
// take the evaluators' busy share from crucible_evaluator_busy_seconds_total
// (run_loop.cpp; issue 22: the run prints it as it goes).
#pragma once

#include <string>

#include "runtime/metrics/registry.hpp"

namespace crucible::metrics {

// The sum of every series of the counter family `name` on r; 0 when r is
// null or holds no such family.
double counter_sum(const registry_ptr& r, const std::string& name);

}  // namespace crucible::metrics
