#include "actors/evaluator/statistics.hpp"

#include <algorithm>
#include <cmath>

#include "runtime/base/result.hpp"

namespace crucible::evaluator {

std::string_view to_string(bucket_statistic s) {
  switch (s) {
    case bucket_statistic::geometric: return "geometric";
    case bucket_statistic::arithmetic: return "arithmetic";
    case bucket_statistic::trimmed: return "trimmed";
    case bucket_statistic::median: return "median";
  }
  return "geometric";
}

result<bucket_statistic> bucket_statistic_by_name(std::string_view name) {
  for (auto s : {bucket_statistic::geometric, bucket_statistic::arithmetic, bucket_statistic::trimmed,
                 bucket_statistic::median})
    if (to_string(s) == name) return s;
  return make_error(errc::invalid_argument, "unknown bucket statistic " + std::string(name));
}

namespace {

double bucket_value(std::span<const double> r, bucket_statistic stat) {
  switch (stat) {
    case bucket_statistic::arithmetic: {
      double acc = 0;
      for (double v : r) acc += v;
      return acc / static_cast<double>(r.size());
    }
    case bucket_statistic::median:
      return median(r);
    case bucket_statistic::trimmed:
    case bucket_statistic::geometric: {
      std::vector<double> v(r.begin(), r.end());
      std::size_t lo = 0, hi = v.size();
      if (stat == bucket_statistic::trimmed) {
        std::sort(v.begin(), v.end());
        lo = v.size() / 10;
        hi = v.size() - lo;
      }
      double acc = 0;
      for (std::size_t i = lo; i < hi; ++i) acc += std::log(v[i]);
      return std::exp(acc / static_cast<double>(hi - lo));
    }
  }
  return 0;
}

}  // namespace

std::vector<double> round_speedups(std::span<const double> ref_seconds,
                                   std::span<const double> cand_seconds) {
  CRUCIBLE_CHECK(ref_seconds.size() == cand_seconds.size(), "paired rounds come in pairs");
  std::vector<double> out;
  out.reserve(ref_seconds.size());
  for (std::size_t i = 0; i < ref_seconds.size(); ++i) {
    CRUCIBLE_CHECK(ref_seconds[i] > 0 && cand_seconds[i] > 0, "round times are positive");
    out.push_back(ref_seconds[i] / cand_seconds[i]);
  }
  return out;
}

std::vector<double> bucket_means(std::span<const double> speedups, std::size_t k,
                                 bucket_statistic stat) {
  const std::size_t n = speedups.size();
  CRUCIBLE_CHECK(k >= 1 && n >= k, "every bucket holds at least one round");
  std::vector<double> means;
  means.reserve(k);
  for (std::size_t b = 0; b < k; ++b) {
    const std::size_t lo = b * n / k, hi = (b + 1) * n / k;
    means.push_back(bucket_value(speedups.subspan(lo, hi - lo), stat));
  }
  return means;
}

std::vector<double> order_balanced_bucket_means(std::span<const double> speedups,
                                                const std::vector<bool>& cand_first, std::size_t k,
                                                bucket_statistic stat) {
  const std::size_t n = speedups.size();
  CRUCIBLE_CHECK(k >= 1 && n >= k, "every bucket holds at least one round");
  CRUCIBLE_CHECK(cand_first.size() == n, "every round has its order");
  std::vector<double> means;
  means.reserve(k);
  for (std::size_t b = 0; b < k; ++b) {
    std::vector<double> by_order[2];
    for (std::size_t i = b * n / k; i < (b + 1) * n / k; ++i) by_order[cand_first[i] ? 1 : 0].push_back(speedups[i]);
    if (by_order[0].empty() || by_order[1].empty()) {
      means.push_back(bucket_value(by_order[0].empty() ? by_order[1] : by_order[0], stat));
      continue;
    }
    means.push_back(std::sqrt(bucket_value(by_order[0], stat) * bucket_value(by_order[1], stat)));
  }
  return means;
}

double sample_variance(std::span<const double> values) {
  if (values.size() < 2) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  double ss = 0;
  for (double v : values) ss += (v - mean) * (v - mean);
  return ss / static_cast<double>(values.size() - 1);
}

double median(std::span<const double> values) {
  if (values.empty()) return 0;
  std::vector<double> v(values.begin(), values.end());
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

double median_relative_stderr(double relative_variance, std::size_t k) {
  if (k == 0) return 0;
  return 1.2533 * std::sqrt(std::max(0.0, relative_variance) / static_cast<double>(k));
}

double conservative_round(double speedup) {
  if (!std::isfinite(speedup) || speedup <= 0) return 0;
  // The epsilon keeps 1.13 (112.99999... in binary) at 1.13.
  constexpr double eps = 1e-9;
  if (speedup >= 1) return std::floor(speedup * 100 + eps) / 100;
  return std::ceil(speedup * 100 - eps) / 100;
}

std::uint64_t seed_stream::next() {
  std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace crucible::evaluator
