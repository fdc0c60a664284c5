#include "runtime/node/hub_metrics.hpp"

#include <cctype>

#include "runtime/metrics/families.hpp"

namespace crucible::node {

namespace p = prometheus;
using metrics::counter;
using metrics::gauge;

namespace {

// A Prometheus counter that follows one of the core's counters.
void follow(p::Counter& c, std::uint64_t value) {
  const double v = static_cast<double>(value);
  if (v > c.Value()) c.Increment(v - c.Value());
}

std::string lower(std::string s) {
  for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

}  // namespace

struct hub_metrics::families {
  explicit families(metrics::registry_ptr r)
      : registry(std::move(r)),
        submitted(counter(*registry, "crucible_hub_jobs_submitted_total", "Jobs accepted from clients, by kind")),
        dispatched(counter(*registry, "crucible_hub_jobs_dispatched_total",
                           "Jobs sent to a worker, by kind (a re-queued job counts again)")),
        completed(counter(*registry, "crucible_hub_jobs_completed_total", "First results of jobs, by kind")),
        requeued(counter(*registry, "crucible_hub_jobs_requeued_total",
                         "Jobs taken back from a dead worker or a lost dispatch and queued again, by kind")),
        queued(gauge(*registry, "crucible_hub_jobs_queued", "Jobs waiting for a worker, by kind")),
        in_flight(gauge(*registry, "crucible_hub_jobs_in_flight", "Jobs at a worker with no result yet, by kind")),
        awaiting_ack(gauge(*registry, "crucible_hub_jobs_awaiting_ack",
                           "Jobs with a result that the submitter has not acknowledged, by kind")),
        peers(gauge(*registry, "crucible_hub_peers", "Registered peers, by role")),
        messages(counter(*registry, "crucible_hub_messages_total",
                         "Messages received by the hub, by outcome (received, malformed, rejected, duplicate)")),
        peers_lost(counter(*registry, "crucible_hub_peers_lost_total", "Peers declared dead after silence")),
        events(counter(*registry, "crucible_hub_events_forwarded_total", "Events fanned out to subscribers")),
        commit(metrics::histogram(*registry, "crucible_hub_ledger_commit_seconds",
                                  "Time to make one batch's ledger writes durable (with the batch's dispatch)")
                   .Add({}, p::Histogram::BucketBoundaries{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                                           0.025, 0.05, 0.1, 0.25, 0.5, 1})) {}

  metrics::registry_ptr registry;
  p::Family<p::Counter>& submitted;
  p::Family<p::Counter>& dispatched;
  p::Family<p::Counter>& completed;
  p::Family<p::Counter>& requeued;
  p::Family<p::Gauge>& queued;
  p::Family<p::Gauge>& in_flight;
  p::Family<p::Gauge>& awaiting_ack;
  p::Family<p::Gauge>& peers;
  p::Family<p::Counter>& messages;
  p::Family<p::Counter>& peers_lost;
  p::Family<p::Counter>& events;
  p::Histogram& commit;
};

hub_metrics::hub_metrics(metrics::registry_ptr registry) : f_(std::make_unique<families>(std::move(registry))) {}
hub_metrics::~hub_metrics() = default;

void hub_metrics::update(const hub::hub_core& core) {
  const auto& c = core.counters();
  for (auto& [kind, k] : c.by_kind) {
    const p::Labels l{{"kind", kind}};
    follow(f_->submitted.Add(l), k.submitted);
    follow(f_->dispatched.Add(l), k.dispatched);
    follow(f_->completed.Add(l), k.completed);
    follow(f_->requeued.Add(l), k.requeued);
  }
  for (auto& [kind, j] : core.jobs_by_kind()) {
    const p::Labels l{{"kind", kind}};
    f_->queued.Add(l).Set(static_cast<double>(j.queued));
    f_->in_flight.Add(l).Set(static_cast<double>(j.in_flight));
    f_->awaiting_ack.Add(l).Set(static_cast<double>(j.done));
  }
  // Every role listed, so that one whose last peer left reads 0.
  const auto by_role = core.peers_by_role();
  for (auto* role = msg::EnumNamesRole(); *role; ++role) {
    auto it = by_role.find(*role);
    f_->peers.Add({{"role", lower(*role)}}).Set(it == by_role.end() ? 0.0 : static_cast<double>(it->second));
  }
  follow(f_->messages.Add({{"outcome", "received"}}), c.received);
  follow(f_->messages.Add({{"outcome", "malformed"}}), c.malformed);
  follow(f_->messages.Add({{"outcome", "rejected"}}), c.rejected);
  follow(f_->messages.Add({{"outcome", "duplicate"}}), c.duplicates);
  follow(f_->peers_lost.Add({}), c.peers_lost);
  follow(f_->events.Add({}), c.events_forwarded);
}

void hub_metrics::observe_commit(std::chrono::nanoseconds took) {
  f_->commit.Observe(std::chrono::duration<double>(took).count());
}

}  // namespace crucible::node
