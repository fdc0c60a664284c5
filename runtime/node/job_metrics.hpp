// Metrics every worker role shares (docs/metrics.md): jobs finished by kind
// and status, and seconds per job by kind. A job_handler that counts the
// jobs of the handler it wraps; the worker actor calls it as any handler,
// and done may come from any thread (prometheus-cpp's metrics are
// thread-safe). Used by `crucible ROLE` (runtime/roles/serve.hpp),
// `crucible worker` and `crucible run`'s hosted roles.
#pragma once

#include <memory>
#include <string>

#include "runtime/metrics/registry.hpp"
#include "runtime/node/worker_actor.hpp"

namespace crucible::node {

// handler itself when registry is null.
std::shared_ptr<job_handler> counting_jobs(std::shared_ptr<job_handler> handler, const metrics::registry_ptr& registry,
                                           const std::string& worker);

}  // namespace crucible::node
