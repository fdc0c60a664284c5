// Bucketing policy: which score interval an exemplar falls in. Pure functions
// of (scale, width); the store persists them so that a database keeps one
// policy for life.
#pragma once

#include <cstdint>
#include <string>

#include "actors/exemplar/exemplar_options.hpp"
#include "runtime/base/result.hpp"

namespace crucible::exemplar {

struct bucket_range {
  double low;   // inclusive
  double high;  // exclusive
};

class bucketing {
 public:
  bucketing(bucket_scale scale, double width);

  // The bucket of a score. errc::invalid_argument for NaN or infinite
  // scores, scores <= 0 on a logarithmic scale, or a bucket outside int32.
  result<std::int32_t> bucket_of(double score) const;
  bucket_range range(std::int32_t bucket) const;

  bucket_scale scale() const { return scale_; }
  double width() const { return width_; }
  // "linear:0.1" / "logarithmic:0.25": the text form persisted in the store.
  std::string describe() const;

 private:
  bucket_scale scale_;
  double width_;
};

}  // namespace crucible::exemplar
