// A rollout's Prometheus families (docs/metrics.md), every series labelled
// with the rollout's bus name (`crucible run` hosts several on one
// endpoint): completions and their tokens sampled and the seconds spent
// sampling them (tokens/s: the rate of one over the other), groups sent to
// the learner or dropped, groups the learner refused, the staleness of the
// groups the learner trained, and the policy version in use. The rollout
// actor calls these on its own thread. Torch-free.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "runtime/metrics/registry.hpp"

namespace crucible::rollout {

class rollout_metrics {
 public:
  rollout_metrics(metrics::registry_ptr registry, std::string rollout);
  ~rollout_metrics();

  // A group's `completions` sampled: `tokens` completion tokens in `seconds`.
  void record_generation(std::uint64_t completions, std::uint64_t tokens, double seconds);
  // A group done settling: sent to the learner, or dropped (no sample settled).
  void record_group(bool sent);
  // The learner's answer to a group sampled at `sampled_version`: refused
  // (not ok), or trained in the step that made version `trained_in`
  // ("trained in version N"; nothing from a stand-in learner's other
  // answers, which count nowhere).
  void record_answer(std::uint64_t sampled_version, bool ok, std::optional<std::uint64_t> trained_in);
  // The weights in use are now `version`.
  void record_version(std::uint64_t version);

 private:
  struct families;
  std::unique_ptr<families> f_;
};

}  // namespace crucible::rollout
