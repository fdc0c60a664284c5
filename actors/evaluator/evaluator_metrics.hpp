// The evaluator's Prometheus families (docs/metrics.md): evaluations by
// status, defences fired, seconds per phase, device busy seconds (its rate
// is the share of time the GPU measures), compile-cache hits and misses.
// The evaluator role calls record() once per evaluation it answers, from
// whichever thread the reply arrives on (the metrics are thread-safe).
#pragma once

#include <memory>
#include <string>

#include "actors/evaluator/evaluate.hpp"
#include "runtime/metrics/registry.hpp"

namespace crucible::evaluator {

class evaluator_metrics {
 public:
  // Labels every series with evaluator (its bus name) and device.
  evaluator_metrics(metrics::registry_ptr registry, std::string evaluator, std::string device);
  ~evaluator_metrics();

  void record(const evaluation& e);

 private:
  struct families;
  std::unique_ptr<families> f_;
};

}  // namespace crucible::evaluator
