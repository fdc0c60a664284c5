// The hub's Prometheus families (docs/metrics.md): jobs by kind (submitted,
// dispatched, completed, re-queued; queued, in flight, awaiting
// acknowledgement), peers by role, messages refused, and the ledger's
// commit latency. Owned by the hub actor and updated on its thread: update()
// copies the core's counters about once a second, observe_commit() times
// every batch that wrote to the ledger.
#pragma once

#include <chrono>
#include <memory>

#include "runtime/hub/hub_core.hpp"
#include "runtime/metrics/registry.hpp"

namespace crucible::node {

class hub_metrics {
 public:
  explicit hub_metrics(metrics::registry_ptr registry);
  ~hub_metrics();

  void update(const hub::hub_core& core);
  void observe_commit(std::chrono::nanoseconds took);

 private:
  struct families;
  std::unique_ptr<families> f_;
};

}  // namespace crucible::node
