#include "actors/rollout/rollout_metrics.hpp"

#include "runtime/metrics/families.hpp"

namespace crucible::rollout {

namespace p = prometheus;

struct rollout_metrics::families {
  families(metrics::registry_ptr r, const std::string& rollout)
      : registry(std::move(r)),
        completions(metrics::counter(*registry, "crucible_rollout_completions_total", "Completions sampled")
                        .Add({{"rollout", rollout}})),
        tokens(metrics::counter(*registry, "crucible_rollout_tokens_generated_total", "Completion tokens sampled")
                   .Add({{"rollout", rollout}})),
        calls(metrics::counter(*registry, "crucible_rollout_generation_calls_total",
                               "Generation calls ([rollout] batch_groups groups each; completions_total over this is "
                               "the rows a call decodes)")
                  .Add({{"rollout", rollout}})),
        seconds(metrics::counter(*registry, "crucible_rollout_generation_seconds_total",
                                 "Seconds spent sampling completions (tokens/s: rate of tokens_generated_total over "
                                 "the rate of this)")
                    .Add({{"rollout", rollout}})),
        sent(group_family().Add({{"rollout", rollout}, {"outcome", "sent"}})),
        dropped(group_family().Add({{"rollout", rollout}, {"outcome", "dropped"}})),
        refused(metrics::counter(*registry, "crucible_rollout_groups_refused_total",
                                 "Groups the learner refused (not admitted: too stale, malformed)")
                    .Add({{"rollout", rollout}})),
        staleness(metrics::histogram(*registry, "crucible_rollout_staleness_versions",
                                     "Per group the learner trained: the learner's version when it trained the group "
                                     "minus the version the group was sampled with")
                      .Add({{"rollout", rollout}}, p::Histogram::BucketBoundaries{0, 1, 2, 3, 4, 6, 8, 16})),
        version(metrics::gauge(*registry, "crucible_rollout_policy_version", "Policy version of the weights in use")
                    .Add({{"rollout", rollout}})) {}

  p::Family<p::Counter>& group_family() {
    return metrics::counter(*registry, "crucible_rollout_groups_total",
                            "Groups sampled and settled, by outcome: sent (to the learner), dropped (no sample "
                            "settled by the deadline)");
  }

  metrics::registry_ptr registry;
  p::Counter& completions;
  p::Counter& tokens;
  p::Counter& calls;
  p::Counter& seconds;
  p::Counter& sent;
  p::Counter& dropped;
  p::Counter& refused;
  p::Histogram& staleness;
  p::Gauge& version;
};

rollout_metrics::rollout_metrics(metrics::registry_ptr registry, std::string rollout)
    : f_(std::make_unique<families>(std::move(registry), rollout)) {}
rollout_metrics::~rollout_metrics() = default;

void rollout_metrics::record_generation(std::uint64_t completions, std::uint64_t tokens, double seconds) {
  f_->completions.Increment(static_cast<double>(completions));
  f_->tokens.Increment(static_cast<double>(tokens));
  f_->calls.Increment();
  f_->seconds.Increment(seconds);
}

void rollout_metrics::record_group(bool sent) { (sent ? f_->sent : f_->dropped).Increment(); }

void rollout_metrics::record_answer(std::uint64_t sampled_version, bool ok, std::optional<std::uint64_t> trained_in) {
  if (!ok) return f_->refused.Increment();
  if (!trained_in) return;
  // The step that made trained_in ran at trained_in - 1: the learner's own
  // staleness of the group (trainer.cpp).
  const std::uint64_t at = *trained_in > 0 ? *trained_in - 1 : 0;
  f_->staleness.Observe(static_cast<double>(at > sampled_version ? at - sampled_version : 0));
}

void rollout_metrics::record_version(std::uint64_t version) { f_->version.Set(static_cast<double>(version)); }

}  // namespace crucible::rollout
