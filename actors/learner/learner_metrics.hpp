// The learner's Prometheus families (docs/metrics.md): seconds per training
// step, the last step's loss and KL, tokens and groups trained, the
// published policy version and the seconds each publication took. The
// learner actor calls record_step() after each step it trains and
// record_publication() after each version it publishes (version 0 at start
// too), on its own thread. Torch-free.
#pragma once

#include <cstdint>
#include <memory>

#include "actors/learner/step_report.hpp"
#include "runtime/metrics/registry.hpp"

namespace crucible::learner {

class learner_metrics {
 public:
  explicit learner_metrics(metrics::registry_ptr registry);
  ~learner_metrics();

  // A step on `groups` groups that `report` describes.
  void record_step(const step_report& report, std::uint64_t groups);
  // `version` is published; publishing it took `seconds`.
  void record_publication(std::uint64_t version, double seconds);

 private:
  struct families;
  std::unique_ptr<families> f_;
};

}  // namespace crucible::learner
