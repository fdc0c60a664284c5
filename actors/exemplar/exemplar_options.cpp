#include "actors/exemplar/exemplar_options.hpp"

#include <cmath>

namespace crucible::exemplar {

status validate(const exemplar_options& o) {
  if (!std::isfinite(o.bucket_width) || o.bucket_width <= 0)
    return make_error(errc::invalid_argument, "exemplar options: bucket_width must be positive and finite");
  if (!std::isfinite(o.temperature))
    return make_error(errc::invalid_argument, "exemplar options: temperature must be finite");
  if (o.islands < 1) return make_error(errc::invalid_argument, "exemplar options: islands must be >= 1");
  if (o.migration_interval < 1)
    return make_error(errc::invalid_argument, "exemplar options: migration_interval must be >= 1");
  if (o.bucket_publish_interval.count() <= 0)
    return make_error(errc::invalid_argument, "exemplar options: bucket_publish_interval must be positive");
  if (o.bucket_refresh_interval.count() < 0)
    return make_error(errc::invalid_argument, "exemplar options: bucket_refresh_interval must not be negative");
  return status::success();
}

const char* to_string(bucket_scale s) {
  switch (s) {
    case bucket_scale::linear: return "linear";
    case bucket_scale::logarithmic: return "logarithmic";
  }
  return "unknown";
}

const char* to_string(selector_kind s) {
  switch (s) {
    case selector_kind::bucket: return "bucket";
    case selector_kind::uniform: return "uniform";
    case selector_kind::island: return "island";
  }
  return "unknown";
}

result<bucket_scale> parse_bucket_scale(const std::string& text) {
  if (text == "linear") return bucket_scale::linear;
  if (text == "log" || text == "logarithmic") return bucket_scale::logarithmic;
  return make_error(errc::invalid_argument, "bucket scale '" + text + "': expected linear or logarithmic");
}

result<selector_kind> parse_selector_kind(const std::string& text) {
  if (text == "bucket") return selector_kind::bucket;
  if (text == "uniform") return selector_kind::uniform;
  if (text == "island") return selector_kind::island;
  return make_error(errc::invalid_argument, "selector '" + text + "': expected bucket, uniform or island");
}

}  // namespace crucible::exemplar
