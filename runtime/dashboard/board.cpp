#include "runtime/dashboard/board.hpp"

#include <algorithm>

namespace crucible::dashboard {

std::string json_text(const nlohmann::json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}


using nlohmann::json;

board::board(board_options options, clock::time_point start) : options_(options), start_(start) {}

void board::update_hub(std::vector<peer_row> fleet, std::vector<queue_row> queues, clock::time_point now) {
  std::lock_guard lock(mu_);
  hub_seen_ = true;
  fleet_ = std::move(fleet);
  queues_ = std::move(queues);
  sample s{std::chrono::duration<double>(now - start_).count(), {}, settled_total_};
  for (const auto& q : queues_) s.completed[q.kind] = q.completed;
  samples_.push_back(std::move(s));
  while (samples_.size() > options_.max_samples) samples_.pop_front();
}

void board::add_settlement(settlement_row s) {
  std::lock_guard lock(mu_);
  ++settled_total_;
  ++verdicts_[s.verdict];
  tasks_.insert(s.task);
  if (s.verdict == "Success") {
    auto it = best_.find(s.task);
    if (it == best_.end() || s.reward > it->second.reward) best_.insert_or_assign(s.task, s);
  }
  settled_.push_back(std::move(s));
  while (settled_.size() > options_.max_settlements) settled_.pop_front();
}

void board::update_buckets(task_buckets t, clock::time_point now) {
  std::lock_guard lock(mu_);
  const double at = std::chrono::duration<double>(now - start_).count();
  auto task = t.task;
  buckets_.insert_or_assign(std::move(task), published_buckets{std::move(t), at});
}

void board::update_peer(std::string name, std::string role, std::string node, bool joined) {
  std::lock_guard lock(mu_);
  if (!joined) {
    announced_.erase(name);
    return;
  }
  auto key = name;
  announced_.insert_or_assign(std::move(key),
                              peer_row{std::move(name), std::move(role), std::move(node), "registered", {}, 0, 0});
}

json board::fleet() const {
  std::lock_guard lock(mu_);
  std::vector<peer_row> announced;
  if (!hub_seen_)
    for (const auto& [name, p] : announced_) announced.push_back(p);
  json peers = json::array();
  for (const auto& p : hub_seen_ ? fleet_ : announced) {
    json jobs = json::array();
    for (const auto& [kind, id] : p.jobs) jobs.push_back({{"kind", kind}, {"id", id}});
    peers.push_back({{"name", p.name},
                     {"role", p.role},
                     {"node", p.node},
                     {"state", p.state},
                     {"free_slots", p.free_slots},
                     {"silent_s", p.silent_s},
                     {"jobs", std::move(jobs)}});
  }
  return {{"hub", hub_seen_}, {"peers", std::move(peers)}};
}

json board::queues() const {
  std::lock_guard lock(mu_);
  json kinds = json::array();
  std::size_t queued = 0, in_flight = 0;
  for (const auto& q : queues_) {
    queued += q.queued;
    in_flight += q.in_flight;
    kinds.push_back({{"kind", q.kind},
                     {"queued", q.queued},
                     {"in_flight", q.in_flight},
                     {"awaiting_ack", q.awaiting_ack},
                     {"submitted", q.submitted},
                     {"completed", q.completed},
                     {"requeued", q.requeued}});
  }
  return {{"hub", hub_seen_}, {"queued", queued}, {"in_flight", in_flight}, {"kinds", std::move(kinds)}};
}

namespace {

json settlement_json(const settlement_row& s) {
  return {{"candidate", s.candidate}, {"task", s.task},       {"group", s.group},
          {"verdict", s.verdict},     {"reason", s.reason},   {"reward", s.reward},
          {"speedup", s.speedup},     {"verified", s.verified}, {"policy_version", s.policy_version},
          {"settled_ns", s.settled_ns}};
}

}  // namespace

json board::settlements(std::size_t newest) const {
  std::lock_guard lock(mu_);
  json rows = json::array();
  for (auto it = settled_.rbegin(); it != settled_.rend() && rows.size() < newest; ++it)
    rows.push_back(settlement_json(*it));
  return {{"total", settled_total_}, {"verdicts", verdicts_}, {"newest", std::move(rows)}};
}

json board::kernels() const {
  std::lock_guard lock(mu_);
  json rows = json::array();
  for (const auto& [task, s] : best_) rows.push_back(settlement_json(s));
  return {{"tasks", tasks_.size()}, {"kernels", std::move(rows)}};
}

json board::throughput() const {
  std::lock_guard lock(mu_);
  // Each sample's rate over the window that ends at it.
  json t = json::array(), settled = json::array();
  std::map<std::string, json> kinds;
  for (const auto& s : samples_)
    for (const auto& [kind, n] : s.completed) kinds.emplace(kind, json::array());
  std::size_t from = 0;
  for (std::size_t i = 0; i < samples_.size(); ++i) {
    const auto& now = samples_[i];
    while (from < i && now.t - samples_[from].t > options_.rate_window_s) ++from;
    const auto& then = samples_[from];
    const double dt = now.t - then.t;
    auto rate = [dt](std::uint64_t a, std::uint64_t b) { return dt > 0 ? static_cast<double>(a - b) / dt : 0.0; };
    t.push_back(now.t);
    settled.push_back(rate(now.settled, then.settled) * 60);
    for (auto& [kind, series] : kinds) {
      auto a = now.completed.find(kind), b = then.completed.find(kind);
      const std::uint64_t na = a == now.completed.end() ? 0 : a->second;
      const std::uint64_t nb = b == then.completed.end() ? 0 : b->second;
      series.push_back(rate(na, std::min(na, nb)));
    }
  }
  return {{"window_s", options_.rate_window_s},
          {"t", std::move(t)},
          {"settled_per_min", std::move(settled)},
          {"jobs_per_s", kinds}};
}

json board::rewards() const {
  std::lock_guard lock(mu_);
  json reward = json::array(), mean = json::array(), verdict = json::array();
  double sum = 0;
  for (std::size_t i = 0; i < settled_.size(); ++i) {
    sum += settled_[i].reward;
    if (i >= options_.reward_window) sum -= settled_[i - options_.reward_window].reward;
    const std::size_t n = std::min(i + 1, options_.reward_window);
    reward.push_back(settled_[i].reward);
    mean.push_back(sum / static_cast<double>(n));
    verdict.push_back(settled_[i].verdict);
  }
  return {{"first_index", settled_total_ - settled_.size()},
          {"window", options_.reward_window},
          {"reward", std::move(reward)},
          {"mean", std::move(mean)},
          {"verdict", std::move(verdict)}};
}

json board::exemplars() const {
  std::lock_guard lock(mu_);
  const double now = std::chrono::duration<double>(clock::now() - start_).count();
  // Every task published, and every task settled that has none yet.
  std::set<std::string> tasks(tasks_);
  for (const auto& [task, p] : buckets_) tasks.insert(task);
  json out = json::array();
  for (const auto& task : tasks) {
    auto it = buckets_.find(task);
    if (it == buckets_.end()) {
      out.push_back({{"task", task}, {"published", false}, {"exemplars", 0}, {"buckets", json::array()}});
      continue;
    }
    const auto& t = it->second.buckets;
    json buckets = json::array();
    std::uint64_t exemplars = 0;
    for (const auto& b : t.buckets) {
      exemplars += b.count;
      buckets.push_back({{"bucket", b.bucket},
                         {"low", b.low},
                         {"high", b.high},
                         {"count", b.count},
                         {"mean", b.mean},
                         {"probability", b.probability}});
    }
    out.push_back({{"task", task},
                   {"published", true},
                   {"store", t.store},
                   {"selector", t.selector},
                   {"temperature", t.temperature},
                   {"scale", t.scale},
                   {"bucket_width", t.bucket_width},
                   {"age_s", std::max(0.0, now - it->second.at)},
                   {"exemplars", exemplars},
                   {"buckets", std::move(buckets)}});
  }
  return {{"available", !buckets_.empty()}, {"tasks", std::move(out)}};
}

}  // namespace crucible::dashboard
