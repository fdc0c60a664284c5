// Selectors: the policies that pick which exemplars of a task go into one
// contrastive prompt. They see only per-bucket statistics (count and mean),
// never the exemplars themselves, so that a pick costs O(buckets) and no scan.
//
// Who calls it: exemplar_store::sample, under the store's lock (a selector
// need not be thread-safe). A selector may keep per-task state in memory (the
// island selector does); it is rebuilt from nothing after a restart.
#pragma once

#include <cstdint>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "actors/exemplar/exemplar_options.hpp"

namespace crucible::exemplar {

using rng = std::mt19937_64;

// A uniform double in [0, 1) and a uniform integer in [0, n), n > 0; the same
// on every platform for a given generator state.
double unit_double(rng& gen);
std::uint64_t uniform_below(rng& gen, std::uint64_t n);

// One non-empty bucket of a task.
struct bucket_stat {
  std::int32_t bucket = 0;  // bucket number (bucketing.hpp)
  std::uint64_t count = 0;  // exemplars in it, > 0
  double mean = 0;          // their mean score s_i
};

// One chosen exemplar: its bucket (an index into the statistics passed to
// choose) and its ordinal in that bucket, in [0, count), in insertion order.
struct pick {
  std::size_t bucket_index = 0;
  std::uint64_t ordinal = 0;
  bool operator==(const pick&) const = default;
};

// The paper's Equation 1: P(B_i) = exp((s_i - μ)/τ) / Σ_j exp((s_j - μ)/τ),
// μ the mean of the bucket means. Computed in a form that neither overflows
// nor underflows for small τ (a constant shift of the exponent, which cancels).
// Requires τ > 0 and finite means.
std::vector<double> equation1(std::span<const double> bucket_means, double temperature);
// The exponents of Equation 1, (s_i - μ)/τ, from which the samplers draw.
std::vector<double> equation1_logits(std::span<const double> bucket_means, double temperature);

class selector {
 public:
  virtual ~selector() = default;

  // Chooses up to n exemplars of task from its buckets (sorted by bucket
  // number, every count > 0). Returns fewer than n when the task has fewer
  // candidates than that (documented behaviour, not an error); none for a task
  // with no buckets. temperature > 0.
  virtual std::vector<pick> choose(std::string_view task, std::span<const bucket_stat> buckets,
                                   std::size_t n, double temperature, rng& gen) = 0;

  // "bucket", "uniform", "island(4, every 100)".
  virtual std::string describe() const = 0;
};

// The paper's sampler: n distinct buckets by Equation 1, without replacement
// (renormalizing over the remaining buckets after each draw), then one
// exemplar uniformly within each chosen bucket.
std::unique_ptr<selector> make_bucket_selector();
// n distinct exemplars uniformly over all of the task's exemplars.
std::unique_ptr<selector> make_uniform_selector();
// Island model: a task's exemplars are dealt round-robin into `islands`
// islands by their ordinal in their bucket (ordinal % islands); successive
// requests for a task visit the islands in turn and sample within the island
// by the bucket rule. Every migration_interval requests, the `migrants` best
// exemplars of the strongest island (highest bucket mean it holds) join the
// weakest one. An island with no exemplars yet falls back to the whole task.
std::unique_ptr<selector> make_island_selector(std::uint32_t islands, std::uint64_t migration_interval,
                                               std::uint32_t migrants);
// The selector options.selector names.
std::unique_ptr<selector> make_selector(const exemplar_options& options);

// Draws up to n distinct indexes i with probability proportional to
// exp(logits[i]), without replacement, renormalizing over the remaining ones
// after each draw. Each draw shifts the remaining exponents by their maximum,
// so that however small τ is, the second draw still sees the second-best
// bucket rather than an underflowed zero. Shared by selectors.
std::vector<std::size_t> draw_without_replacement(std::span<const double> logits, std::size_t n, rng& gen);

}  // namespace crucible::exemplar
