// The paper's bucket sampler (Equation 1), and the uniform ablation.
#include <algorithm>

#include "actors/exemplar/selector.hpp"

namespace crucible::exemplar {
namespace {

class bucket_selector final : public selector {
 public:
  std::vector<pick> choose(std::string_view, std::span<const bucket_stat> buckets, std::size_t n,
                           double temperature, rng& gen) override {
    std::vector<double> means;
    means.reserve(buckets.size());
    for (const auto& b : buckets) means.push_back(b.mean);
    std::vector<double> logits = equation1_logits(means, temperature);
    std::vector<pick> picks;
    for (std::size_t i : draw_without_replacement(logits, n, gen)) {
      picks.push_back({i, uniform_below(gen, buckets[i].count)});
    }
    return picks;
  }
  std::string describe() const override { return "bucket"; }
};

class uniform_selector final : public selector {
 public:
  std::vector<pick> choose(std::string_view, std::span<const bucket_stat> buckets, std::size_t n, double,
                           rng& gen) override {
    std::uint64_t total = 0;
    for (const auto& b : buckets) total += b.count;
    std::vector<std::uint64_t> chosen;
    while (chosen.size() < n && chosen.size() < total) {
      std::uint64_t g = uniform_below(gen, total);
      if (std::find(chosen.begin(), chosen.end(), g) == chosen.end()) chosen.push_back(g);
    }
    std::vector<pick> picks;
    for (std::uint64_t g : chosen) {
      std::size_t i = 0;
      while (g >= buckets[i].count) g -= buckets[i++].count;
      picks.push_back({i, g});
    }
    return picks;
  }
  std::string describe() const override { return "uniform"; }
};

}  // namespace

std::unique_ptr<selector> make_bucket_selector() { return std::make_unique<bucket_selector>(); }
std::unique_ptr<selector> make_uniform_selector() { return std::make_unique<uniform_selector>(); }

}  // namespace crucible::exemplar
