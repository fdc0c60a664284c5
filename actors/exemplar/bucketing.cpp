#include "actors/exemplar/bucketing.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <fmt/format.h>

namespace crucible::exemplar {

bucketing::bucketing(bucket_scale scale, double width) : scale_(scale), width_(width) {
  CRUCIBLE_CHECK(std::isfinite(width) && width > 0, "bucket width must be positive and finite");
}

result<std::int32_t> bucketing::bucket_of(double score) const {
  if (!std::isfinite(score)) return make_error(errc::invalid_argument, fmt::format("score {} is not finite", score));
  double x = score;
  if (scale_ == bucket_scale::logarithmic) {
    if (score <= 0) {
      return make_error(errc::invalid_argument,
                        fmt::format("score {} must be > 0 on a logarithmic bucket scale", score));
    }
    x = std::log(score);
  }
  // Scores sit on decimal edges (1.40 with width 0.1): a quotient within
  // rounding error of an integer is that edge, the low end of the upper bucket.
  const double r = x / width_;
  const double edge = std::nearbyint(r);
  const double k = std::fabs(r - edge) <= 1e-9 * std::max(1.0, std::fabs(r)) ? edge : std::floor(r);
  if (k > std::numeric_limits<std::int32_t>::max() || k < std::numeric_limits<std::int32_t>::min()) {
    return make_error(errc::invalid_argument, fmt::format("score {} is outside the bucket range", score));
  }
  return static_cast<std::int32_t>(k);
}

bucket_range bucketing::range(std::int32_t bucket) const {
  double lo = bucket * width_;
  double hi = (static_cast<double>(bucket) + 1) * width_;
  if (scale_ == bucket_scale::logarithmic) return {std::exp(lo), std::exp(hi)};
  return {lo, hi};
}

std::string bucketing::describe() const { return fmt::format("{}:{}", to_string(scale_), width_); }

}  // namespace crucible::exemplar
