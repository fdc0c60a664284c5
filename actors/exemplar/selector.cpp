#include "actors/exemplar/selector.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace crucible::exemplar {

double unit_double(rng& gen) { return static_cast<double>(gen() >> 11) * 0x1.0p-53; }

std::uint64_t uniform_below(rng& gen, std::uint64_t n) {
  CRUCIBLE_CHECK(n > 0, "uniform_below(0)");
  // Rejection sampling: no modulo bias.
  const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() - std::numeric_limits<std::uint64_t>::max() % n;
  std::uint64_t x;
  do x = gen();
  while (x >= limit);
  return x % n;
}

std::vector<double> equation1_logits(std::span<const double> bucket_means, double temperature) {
  CRUCIBLE_CHECK(temperature > 0 && std::isfinite(temperature), "temperature must be positive and finite");
  std::vector<double> logits(bucket_means.size());
  if (logits.empty()) return logits;
  const double mu = std::accumulate(bucket_means.begin(), bucket_means.end(), 0.0) / bucket_means.size();
  for (std::size_t i = 0; i < logits.size(); ++i) logits[i] = (bucket_means[i] - mu) / temperature;
  return logits;
}

std::vector<double> equation1(std::span<const double> bucket_means, double temperature) {
  // exp((s_i - μ)/τ) / Σ exp((s_j - μ)/τ); shifting every exponent by the
  // largest one leaves the ratio unchanged and keeps exp() in range.
  std::vector<double> p = equation1_logits(bucket_means, temperature);
  if (p.empty()) return p;
  const double top = *std::max_element(p.begin(), p.end());
  double sum = 0;
  for (double& x : p) sum += (x = std::exp(x - top));
  for (double& x : p) x /= sum;
  return p;
}

std::vector<std::size_t> draw_without_replacement(std::span<const double> logits, std::size_t n, rng& gen) {
  std::vector<bool> taken(logits.size(), false);
  std::vector<double> w(logits.size());
  std::vector<std::size_t> out;
  while (out.size() < n && out.size() < logits.size()) {
    double top = -std::numeric_limits<double>::infinity();
    for (std::size_t i = 0; i < logits.size(); ++i)
      if (!taken[i]) top = std::max(top, logits[i]);
    double total = 0;
    for (std::size_t i = 0; i < logits.size(); ++i) total += (w[i] = taken[i] ? 0.0 : std::exp(logits[i] - top));
    double u = unit_double(gen) * total;
    std::size_t chosen = logits.size();
    for (std::size_t i = 0; i < w.size(); ++i) {
      if (w[i] <= 0) continue;
      chosen = i;  // the last positive weight takes any rounding remainder
      if (u < w[i]) break;
      u -= w[i];
    }
    CRUCIBLE_CHECK(chosen < w.size(), "no bucket left to draw");
    out.push_back(chosen);
    taken[chosen] = true;  // without replacement; the next draw renormalizes
  }
  return out;
}

std::unique_ptr<selector> make_selector(const exemplar_options& options) {
  switch (options.selector) {
    case selector_kind::bucket: return make_bucket_selector();
    case selector_kind::uniform: return make_uniform_selector();
    case selector_kind::island:
      return make_island_selector(options.islands, options.migration_interval, options.migrants);
  }
  CRUCIBLE_CHECK(false, "unknown selector kind");
  return nullptr;
}

}  // namespace crucible::exemplar
