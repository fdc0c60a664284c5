// Island-based selection with migration from strong to weak islands.
#include <algorithm>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "actors/exemplar/selector.hpp"

namespace crucible::exemplar {
namespace {

// An exemplar by bucket number (stable as buckets appear) and ordinal.
struct member {
  std::int32_t bucket;
  std::uint64_t ordinal;
  bool operator==(const member&) const = default;
};

class island_selector final : public selector {
 public:
  island_selector(std::uint32_t islands, std::uint64_t interval, std::uint32_t migrants)
      : islands_(islands), interval_(interval), migrants_(migrants) {
    CRUCIBLE_CHECK(islands >= 1 && interval >= 1, "island selector needs islands >= 1 and interval >= 1");
  }

  std::vector<pick> choose(std::string_view task, std::span<const bucket_stat> buckets, std::size_t n,
                           double temperature, rng& gen) override {
    auto& t = tasks_[std::string(task)];
    if (t.migrants.empty()) t.migrants.resize(islands_);
    if (t.steps > 0 && t.steps % interval_ == 0) migrate(t, buckets);
    const std::uint32_t island = static_cast<std::uint32_t>(t.steps % islands_);
    ++t.steps;

    // The island's view: per bucket, its native members and its migrants.
    std::vector<std::size_t> index;  // into buckets
    std::vector<double> means;
    for (std::size_t i = 0; i < buckets.size(); ++i) {
      if (count_in(t, island, buckets[i]) == 0) continue;
      index.push_back(i);
      means.push_back(buckets[i].mean);
    }
    if (index.empty()) return fallback_->choose(task, buckets, n, temperature, gen);

    std::vector<pick> picks;
    for (std::size_t k : draw_without_replacement(equation1_logits(means, temperature), n, gen)) {
      const bucket_stat& b = buckets[index[k]];
      picks.push_back({index[k], ordinal_in(t, island, b, uniform_below(gen, count_in(t, island, b)))});
    }
    return picks;
  }

  std::string describe() const override {
    return fmt::format("island({} islands, migrate {} every {} requests)", islands_, migrants_, interval_);
  }

 private:
  struct task_state {
    std::uint64_t steps = 0;
    std::vector<std::vector<member>> migrants;  // per island
  };

  // Bucket b's exemplars on island i: native ones (ordinal % islands == i),
  // then migrants. Counted and indexed arithmetically, never listed.
  std::uint64_t native_count(std::uint32_t i, const bucket_stat& b) const {
    return b.count > i ? (b.count - 1 - i) / islands_ + 1 : 0;
  }
  std::vector<std::uint64_t> migrants_in(const task_state& t, std::uint32_t i, const bucket_stat& b) const {
    std::vector<std::uint64_t> out;
    for (const auto& m : t.migrants[i])
      if (m.bucket == b.bucket && m.ordinal < b.count) out.push_back(m.ordinal);
    return out;
  }
  std::uint64_t count_in(const task_state& t, std::uint32_t i, const bucket_stat& b) const {
    return native_count(i, b) + migrants_in(t, i, b).size();
  }
  // The j-th exemplar of bucket b on island i, j < count_in(t, i, b).
  std::uint64_t ordinal_in(const task_state& t, std::uint32_t i, const bucket_stat& b, std::uint64_t j) const {
    std::uint64_t native = native_count(i, b);
    if (j < native) return i + j * islands_;
    return migrants_in(t, i, b)[j - native];
  }

  // The island's best members, best bucket first.
  std::vector<member> best_of(const task_state& t, std::uint32_t i, std::span<const bucket_stat> buckets,
                              std::size_t limit) const {
    std::vector<std::size_t> order(buckets.size());
    for (std::size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](auto a, auto b) { return buckets[a].mean > buckets[b].mean; });
    std::vector<member> out;
    for (std::size_t k : order) {
      for (std::uint64_t j = 0; j < count_in(t, i, buckets[k]); ++j) {
        if (out.size() == limit) return out;
        out.push_back({buckets[k].bucket, ordinal_in(t, i, buckets[k], j)});
      }
    }
    return out;
  }

  double strength(const task_state& t, std::uint32_t i, std::span<const bucket_stat> buckets) const {
    double best = -std::numeric_limits<double>::infinity();
    for (const auto& b : buckets)
      if (count_in(t, i, b) > 0) best = std::max(best, b.mean);
    return best;
  }

  void migrate(task_state& t, std::span<const bucket_stat> buckets) {
    if (islands_ < 2) return;
    std::uint32_t strong = 0, weak = 0;
    for (std::uint32_t i = 1; i < islands_; ++i) {
      if (strength(t, i, buckets) > strength(t, strong, buckets)) strong = i;
      if (strength(t, i, buckets) < strength(t, weak, buckets)) weak = i;
    }
    if (strong == weak || strength(t, strong, buckets) == strength(t, weak, buckets)) return;
    auto& into = t.migrants[weak];
    for (const member& m : best_of(t, strong, buckets, migrants_)) {
      bool native = m.ordinal % islands_ == weak;
      if (!native && std::find(into.begin(), into.end(), m) == into.end()) into.push_back(m);
    }
  }

  std::uint32_t islands_;
  std::uint64_t interval_;
  std::uint32_t migrants_;
  std::map<std::string, task_state, std::less<>> tasks_;
  std::unique_ptr<selector> fallback_ = make_bucket_selector();
};

}  // namespace

std::unique_ptr<selector> make_island_selector(std::uint32_t islands, std::uint64_t migration_interval,
                                               std::uint32_t migrants) {
  return std::make_unique<island_selector>(islands, migration_interval, migrants);
}

}  // namespace crucible::exemplar
