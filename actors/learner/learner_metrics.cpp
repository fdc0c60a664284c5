#include "actors/learner/learner_metrics.hpp"

#include "runtime/metrics/families.hpp"

namespace crucible::learner {

namespace p = prometheus;

struct learner_metrics::families {
  explicit families(metrics::registry_ptr r)
      : registry(std::move(r)),
        step_seconds(metrics::histogram(*registry, "crucible_learner_step_seconds",
                                        "Wall seconds of each training step (a batch of groups_per_batch groups)")
                         .Add({}, p::Histogram::BucketBoundaries{0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600})),
        loss(metrics::gauge(*registry, "crucible_learner_loss", "Loss of the last step (mean over its mini-batches)")
                 .Add({})),
        kl(metrics::gauge(*registry, "crucible_learner_kl",
                          "Mean k3 KL per token to the reference policy in the last step (0 without kl_beta)")
               .Add({})),
        version(metrics::gauge(*registry, "crucible_learner_version", "The latest policy version published").Add({})),
        publication_seconds(
            metrics::histogram(*registry, "crucible_learner_publication_seconds",
                               "Seconds to publish a version (serialise, hash, write or announce the weights)")
                .Add({}, p::Histogram::BucketBoundaries{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60})),
        tokens(metrics::counter(*registry, "crucible_learner_tokens_trained_total",
                                "Prompt and completion tokens through the network in training steps")
                   .Add({})),
        groups(metrics::counter(*registry, "crucible_learner_groups_trained_total", "Rollout groups trained on")
                   .Add({})) {}

  metrics::registry_ptr registry;
  p::Histogram& step_seconds;
  p::Gauge& loss;
  p::Gauge& kl;
  p::Gauge& version;
  p::Histogram& publication_seconds;
  p::Counter& tokens;
  p::Counter& groups;
};

learner_metrics::learner_metrics(metrics::registry_ptr registry)
    : f_(std::make_unique<families>(std::move(registry))) {}
learner_metrics::~learner_metrics() = default;

void learner_metrics::record_step(const step_report& report, std::uint64_t groups) {
  f_->step_seconds.Observe(report.seconds);
  f_->loss.Set(report.loss);
  f_->kl.Set(report.kl);
  f_->tokens.Increment(static_cast<double>(report.tokens));
  f_->groups.Increment(static_cast<double>(groups));
}

void learner_metrics::record_publication(std::uint64_t version, double seconds) {
  f_->version.Set(static_cast<double>(version));
  f_->publication_seconds.Observe(seconds);
}

}  // namespace crucible::learner
