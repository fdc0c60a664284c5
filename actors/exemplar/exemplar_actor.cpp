#include "actors/exemplar/exemplar_actor.hpp"

#include <chrono>
#include <deque>
#include <optional>
#include <set>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace crucible::exemplar {

const char* to_string(settle_outcome o) {
  switch (o) {
    case settle_outcome::inserted: return "inserted";
    case settle_outcome::duplicate: return "duplicate";
    case settle_outcome::ignored: return "ignored";
    case settle_outcome::failed: return "failed";
  }
  return "unknown";
}

namespace {

// Settlements the store could not write, in arrival order, with their
// requesters' promises.
struct held_settlements {
  std::deque<std::pair<settlement, caf::typed_response_promise<settle_reply>>> queue;
  std::optional<std::chrono::steady_clock::time_point> failing_since;
  std::chrono::steady_clock::time_point last_logged;
};

// Tasks whose buckets changed since the listener last heard of them.
struct bucket_publication {
  bucket_listener listener;
  std::set<std::string> changed;
  bool scheduled = false;  // a publish_atom is on its way
  std::chrono::steady_clock::time_point last = std::chrono::steady_clock::time_point::min();
};

struct exemplar_state {
  std::shared_ptr<exemplar_store> store;
  exemplar_options options;
  rng gen;
  held_settlements held;
  bucket_publication buckets;
  static inline const char* name = "exemplar";
};

using exemplar_pointer = exemplar_actor::stateful_pointer<exemplar_state>;

exemplar_answer answer(exemplar_state& st, const exemplar_query& q) {
  exemplar_answer a{q.task_id, {}, {}};
  const std::size_t n = q.n ? q.n : st.options.n;
  const double tau = q.temperature > 0 ? q.temperature : st.options.temperature;
  rng seeded(q.seed);
  auto r = st.store->sample(q.task_id, n, tau, q.seed ? seeded : st.gen);
  if (r.ok()) {
    a.exemplars = std::move(r).value();
  } else {
    a.error = r.error().text();
  }
  return a;
}

// The reply to s, or nullopt when the store could not write it (errc::io).
std::optional<settle_reply> settle(exemplar_state& st, const settlement& s) {
  if (s.status != settlement_status::success) return settle_reply{settle_outcome::ignored, "not a success"};
  if (s.code.empty()) return settle_reply{settle_outcome::ignored, "success without code"};
  auto r = st.store->insert({s.task_id, s.candidate_id, s.code, s.reward});
  if (!r.ok() && r.error().code == errc::io) {
    auto& held = st.held;
    const auto now = std::chrono::steady_clock::now();
    if (!held.failing_since || now - held.last_logged >= std::chrono::minutes(1)) {
      held.last_logged = now;
      spdlog::error("exemplar store: cannot insert {}: {}; {} insert(s) wait until it writes again", s.candidate_id,
                    r.error().text(), held.queue.size() + (held.failing_since ? 0 : 1));
    }
    if (!held.failing_since) held.failing_since = now;
    return std::nullopt;
  }
  if (!r.ok()) return settle_reply{settle_outcome::failed, r.error().text()};
  return settle_reply{*r == insert_outcome::inserted ? settle_outcome::inserted : settle_outcome::duplicate, {}};
}

// Tells the listener the buckets of task as the store has them.
void publish(exemplar_state& st, const std::string& task) {
  auto stats = st.store->stats(task);
  if (!stats.ok()) {
    spdlog::warn("exemplar store: the buckets of {} are not published: {}", task, stats.error().text());
    return;
  }
  bucket_report r{task, std::move(stats).value(), {}, st.options.selector, st.options.temperature,
                  st.options.scale, st.options.bucket_width};
  r.probability = first_draw_chances(r.buckets, st.options);
  st.buckets.listener(std::move(r));
}

// An insert changed task: publish it at once when the last publication is
// an interval old, else with those changed meanwhile when it is.
void changed(exemplar_pointer self, const settlement& s, const settle_reply& reply) {
  auto& pub = self->state.buckets;
  if (!pub.listener || reply.outcome != settle_outcome::inserted) return;
  pub.changed.insert(s.task_id);
  if (pub.scheduled) return;
  pub.scheduled = true;
  const auto due = pub.last + self->state.options.bucket_publish_interval;
  const auto now = std::chrono::steady_clock::now();
  if (pub.last == std::chrono::steady_clock::time_point::min() || due <= now) {
    self->send(self, publish_atom::value);
  } else {
    self->delayed_send(self, std::chrono::duration_cast<std::chrono::milliseconds>(due - now) + std::chrono::milliseconds(1),
                       publish_atom::value);
  }
}

void publish_changed(exemplar_pointer self) {
  auto& pub = self->state.buckets;
  pub.scheduled = false;
  pub.last = std::chrono::steady_clock::now();
  for (const auto& task : std::exchange(pub.changed, {})) publish(self->state, task);
}

void refresh(exemplar_pointer self) {
  auto& st = self->state;
  if (auto tasks = st.store->tasks(); tasks.ok()) {
    for (const auto& task : *tasks) publish(st, task);
  } else {
    spdlog::warn("exemplar store: the buckets are not published: {}", tasks.error().text());
  }
  if (st.options.bucket_refresh_interval.count() > 0)
    self->delayed_send(self, st.options.bucket_refresh_interval, refresh_atom::value);
}

// Writes the held settlements in order, answering each, up to the first the
// store still refuses; asks for another try while any waits.
void retry_held(exemplar_pointer self) {
  auto& held = self->state.held;
  while (!held.queue.empty()) {
    auto reply = settle(self->state, held.queue.front().first);
    if (!reply) break;
    changed(self, held.queue.front().first, *reply);
    held.queue.front().second.deliver(std::move(*reply));
    held.queue.pop_front();
  }
  if (!held.queue.empty()) {
    self->delayed_send(self, self->state.options.storage_retry, retry_atom::value);
  } else if (held.failing_since) {
    spdlog::info("exemplar store: writes again after {:.0f} s",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - *held.failing_since).count());
    held.failing_since.reset();
  }
}

exemplar_actor::behavior_type exemplar_behavior(exemplar_pointer self, std::shared_ptr<exemplar_store> store,
                                                exemplar_options options, bucket_listener on_buckets) {
  self->state.store = std::move(store);
  self->state.options = options;
  self->state.gen.seed(options.seed);
  self->state.buckets.listener = std::move(on_buckets);
  if (self->state.buckets.listener) self->delayed_send(self, options.bucket_publish_interval, refresh_atom::value);
  return {
      [=](sample_atom, const exemplar_query& q) { return answer(self->state, q); },
      [=](settle_atom, const settlement& s) -> caf::result<settle_reply> {
        auto& held = self->state.held;
        if (held.queue.empty())  // else it waits behind those held
          if (auto reply = settle(self->state, s)) {
            changed(self, s, *reply);
            return *reply;
          }
        held.queue.emplace_back(s, self->make_response_promise<settle_reply>());
        if (held.queue.size() == 1) self->delayed_send(self, self->state.options.storage_retry, retry_atom::value);
        return held.queue.back().second;
      },
      [=](retry_atom) { retry_held(self); },
      [=](publish_atom) { publish_changed(self); },
      [=](refresh_atom) { refresh(self); },
      [=](stats_atom, const std::string& task) -> caf::result<std::vector<bucket_summary>> {
        auto r = self->state.store->stats(task);
        if (!r.ok()) return caf::make_error(caf::sec::runtime_error, r.error().text());
        return std::move(r).value();
      },
  };
}

}  // namespace

std::vector<double> first_draw_chances(const std::vector<bucket_summary>& buckets, const exemplar_options& options) {
  if (buckets.empty()) return {};
  if (options.selector == selector_kind::uniform || !(options.temperature > 0)) {
    std::uint64_t total = 0;
    for (const auto& b : buckets) total += b.count;
    std::vector<double> share;
    for (const auto& b : buckets) share.push_back(total ? static_cast<double>(b.count) / total : 0.0);
    return share;
  }
  std::vector<double> means;
  for (const auto& b : buckets) means.push_back(b.mean());
  return equation1(means, options.temperature);
}

exemplar_actor spawn_exemplar_actor(caf::actor_system& system, std::shared_ptr<exemplar_store> store,
                                    exemplar_options options, bucket_listener on_buckets) {
  // Detached: RocksDB reads and (synced) writes block, so the actor gets a
  // thread of its own instead of holding a scheduler worker.
  return system.spawn<caf::detached>(exemplar_behavior, std::move(store), options, std::move(on_buckets));
}

}  // namespace crucible::exemplar
