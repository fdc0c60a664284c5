// The measurement statistics of the evaluator (design.md section 5, layers
// 4 to 6): per-round speedups, consecutive buckets, the variance of the
// bucket means, their median, and the conservative rounding of the reward.
// Pure functions on numbers; called by evaluate.cpp and by tests. No state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::evaluator {

// How a bucket's rounds become its one number.
enum class bucket_statistic {
  geometric,   // exp(mean(log(ref/cand))): unbiased for identity under random order
  arithmetic,  // mean(ref/cand), the paper's plain mean
  trimmed,     // geometric mean of the central 80% of the rounds (drops the
               // 10% fastest and slowest ratios: preemption outliers)
  median,      // median of the rounds' ratios
};

std::string_view to_string(bucket_statistic s);
// "geometric", "arithmetic", "trimmed", "median". Errors: invalid_argument.
result<bucket_statistic> bucket_statistic_by_name(std::string_view name);

// ref[i] / cand[i] for every round. Rounds with a non-positive time are a
// broken invariant (a worker never reports them) and abort.
std::vector<double> round_speedups(std::span<const double> ref_seconds,
                                   std::span<const double> cand_seconds);

// Splits n values into k consecutive buckets, bucket i holding
// [i*n/k, (i+1)*n/k) (integer division), and returns each bucket's statistic.
// Requires n >= k >= 1.
std::vector<double> bucket_means(std::span<const double> speedups, std::size_t k,
                                 bucket_statistic stat);

// As bucket_means, with the order of each round (cand_first[i]: the
// candidate ran first in round i): within a bucket, the statistic of the
// candidate-first rounds and that of the reference-first rounds are combined
// by their geometric mean (a bucket with only one order takes that one's).
// Running second is faster or slower than running first by a few percent
// (caches, clocks); with a random order that effect does not cancel in a
// bucket of 20 rounds split 12 to 8, and showed as identity at 1.01 on CPU.
// Stratified, it cancels whatever the split. Requires n >= k >= 1 and
// cand_first.size() == n.
std::vector<double> order_balanced_bucket_means(std::span<const double> speedups,
                                                const std::vector<bool>& cand_first, std::size_t k,
                                                bucket_statistic stat);

// Sample variance (divisor n - 1); 0 for fewer than two values.
double sample_variance(std::span<const double> values);

// Median (mean of the two middle values for an even count); 0 when empty.
double median(std::span<const double> values);

// The relative standard error of the median of k bucket means whose values
// over their median have sample variance relative_variance:
// 1.2533 * sqrt(relative_variance / k) (1.2533 = sqrt(pi / 2), the median's
// standard error over the mean's for normal buckets). The early stop's
// number (evaluate.cpp); tests derive their bounds on a measured reward
// from it. 0 for k == 0.
double median_relative_stderr(double relative_variance, std::size_t k);

// Layer 6: two decimals toward 1.00 (floor above 1, ceil below 1):
// 1.118 -> 1.11, 0.992 -> 1.00, 0.5 -> 0.5. Non-finite or non-positive -> 0.
double conservative_round(double speedup);

// A deterministic stream of 64-bit seeds (splitmix64) from one recorded seed.
class seed_stream {
 public:
  explicit seed_stream(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next();

 private:
  std::uint64_t state_;
};

}  // namespace crucible::evaluator
