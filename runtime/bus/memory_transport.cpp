#include "runtime/bus/memory_transport.hpp"

#include <map>
#include <mutex>
#include <random>
#include <set>

namespace crucible::bus {

namespace {
const std::string hub_name = "\x01hub";
}

struct memory_network::state {
  struct pending {
    time_point due;
    std::uint64_t order;
    std::string to;
    frame f;
  };
  struct by_due {
    bool operator()(const pending& a, const pending& b) const {
      return a.due != b.due ? a.due < b.due : a.order < b.order;
    }
  };

  mutable std::mutex mu;  // guards everything below
  fault_plan plan;
  bool faults = true;
  std::mt19937_64 rng;
  time_point now{};
  std::uint64_t order = 0;
  std::multiset<pending, by_due> queue;
  std::map<std::string, std::vector<frame>> inbox;            // due, not yet received
  std::map<std::string, std::vector<std::string>> subscriptions;
  std::set<std::string> cut;
  std::size_t dropped = 0, duplicated = 0;

  // Queues f for to, applying faults. Caller holds mu.
  void post(const std::string& from, const std::string& to, frame f) {
    if (cut.count(from) || cut.count(to)) {
      ++dropped;
      return;
    }
    int copies = 1;
    if (faults) {
      std::uniform_real_distribution<double> u(0, 1);
      if (u(rng) < plan.drop) {
        ++dropped;
        return;
      }
      if (u(rng) < plan.duplicate) {
        ++duplicated;
        copies = 2;
      }
    }
    for (int i = 0; i < copies; ++i) {
      auto delay = plan.min_delay;
      if (faults && plan.max_delay > plan.min_delay) {
        std::uniform_int_distribution<long> d(plan.min_delay.count(), plan.max_delay.count());
        delay = std::chrono::milliseconds(d(rng));
      }
      queue.insert(pending{now + delay, order++, to, i + 1 < copies ? f : std::move(f)});
    }
  }

  void release_due() {
    while (!queue.empty() && queue.begin()->due <= now) {
      auto node = queue.extract(queue.begin());
      if (!cut.count(node.value().to)) inbox[node.value().to].push_back(std::move(node.value().f));
    }
  }
};

namespace {

class memory_end final : public transport {
 public:
  memory_end(std::shared_ptr<memory_network::state> s, std::string name, bool is_hub)
      : s_(std::move(s)), name_(std::move(name)), is_hub_(is_hub) {}

  status send(std::string_view peer, std::span<const std::uint8_t> data) override {
    std::lock_guard lock(s_->mu);
    frame f;
    f.data.assign(data.begin(), data.end());
    if (is_hub_) {
      s_->post(name_, std::string(peer), std::move(f));
    } else {
      f.peer = name_;
      s_->post(name_, hub_name, std::move(f));
    }
    return {};
  }

  status publish(std::string_view topic, std::span<const std::uint8_t> data) override {
    std::lock_guard lock(s_->mu);
    frame f;
    f.via = channel::event;
    f.topic = std::string(topic);
    f.data.assign(data.begin(), data.end());
    if (!is_hub_) {  // peers publish to the hub, which fans out
      s_->post(name_, hub_name, std::move(f));
      return {};
    }
    for (auto& [peer, prefixes] : s_->subscriptions)
      for (auto& p : prefixes)
        if (topic.substr(0, p.size()) == p) {
          s_->post(name_, peer, f);
          break;
        }
    return {};
  }

  status subscribe(std::string_view prefix) override {
    std::lock_guard lock(s_->mu);
    if (!is_hub_) s_->subscriptions[name_].emplace_back(prefix);
    return {};
  }

  status receive(std::vector<frame>& out, std::size_t max, std::chrono::milliseconds) override {
    std::lock_guard lock(s_->mu);
    auto& box = s_->inbox[name_];
    std::size_t n = std::min(max, box.size());
    for (std::size_t i = 0; i < n; ++i) out.push_back(std::move(box[i]));
    box.erase(box.begin(), box.begin() + static_cast<long>(n));
    return {};
  }

  void wake() override {}

  std::string describe() const override { return "memory " + (is_hub_ ? std::string("hub") : name_); }

 private:
  std::shared_ptr<memory_network::state> s_;
  std::string name_;
  bool is_hub_;
};

}  // namespace

memory_network::memory_network(fault_plan plan) : state_(std::make_shared<state>()) {
  state_->plan = plan;
  state_->rng.seed(plan.seed);
}
memory_network::~memory_network() = default;

std::unique_ptr<transport> memory_network::hub_end() {
  return std::make_unique<memory_end>(state_, hub_name, true);
}
std::unique_ptr<transport> memory_network::peer_end(const std::string& name) {
  return std::make_unique<memory_end>(state_, name, false);
}

void memory_network::advance(std::chrono::milliseconds dt) {
  std::lock_guard lock(state_->mu);
  state_->now += dt;
  state_->release_due();
}

memory_network::time_point memory_network::now() const {
  std::lock_guard lock(state_->mu);
  return state_->now;
}

void memory_network::cut(const std::string& name) {
  std::lock_guard lock(state_->mu);
  state_->cut.insert(name);
  state_->inbox.erase(name);
}
void memory_network::reconnect(const std::string& name) {
  std::lock_guard lock(state_->mu);
  state_->cut.erase(name);
}
void memory_network::set_faults(bool enabled) {
  std::lock_guard lock(state_->mu);
  state_->faults = enabled;
}
std::size_t memory_network::in_flight() const {
  std::lock_guard lock(state_->mu);
  std::size_t n = state_->queue.size();
  for (auto& [_, box] : state_->inbox) n += box.size();
  return n;
}
std::size_t memory_network::dropped() const {
  std::lock_guard lock(state_->mu);
  return state_->dropped;
}
std::size_t memory_network::duplicated() const {
  std::lock_guard lock(state_->mu);
  return state_->duplicated;
}

}  // namespace crucible::bus
