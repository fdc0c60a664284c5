#include "actors/evaluator/protocol.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace crucible::evaluator {

std::string tolerance_table::text() const {
  std::string out = fmt::format("atol={} rtol={}", fallback.atol, fallback.rtol);
  for (const auto& [dtype, t] : by_dtype) out += fmt::format(", {} atol={} rtol={}", dtype, t.atol, t.rtol);
  return out;
}

tolerance_table protocol_options::tolerances() const {
  tolerance_table t;
  if (strict) {
    t.fallback = {strict_tolerance, strict_tolerance};
    t.by_dtype["float16"] = {1e-3, 1e-3};
    t.by_dtype["bfloat16"] = {1e-2, 1e-2};
  } else {
    t.fallback = {atol, rtol};
  }
  for (const auto& [dtype, tol] : dtype_tolerance) t.by_dtype[dtype] = tol;
  return t;
}

namespace {

result<double> tolerance_number(std::string_view text, std::string_view setting) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc{} || end != text.data() + text.size() || !std::isfinite(v) || v < 0)
    return make_error(errc::invalid_argument,
                      fmt::format("tolerance '{}': '{}' is not a non-negative number", setting, text));
  return v;
}

}  // namespace

status apply_tolerance(protocol_options& p, std::string_view setting) {
  std::string_view dtype, values = setting;
  if (auto eq = setting.find('='); eq != std::string_view::npos) {
    dtype = setting.substr(0, eq);
    values = setting.substr(eq + 1);
    if (dtype.empty() || dtype.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string_view::npos)
      return make_error(errc::invalid_argument,
                        fmt::format("tolerance '{}': '{}' is not a torch dtype name (float16, bfloat16, float32, ...)",
                                    setting, dtype));
  }
  const auto colon = values.find(':');
  auto atol = tolerance_number(values.substr(0, colon), setting);
  if (!atol) return atol.error();
  auto rtol = colon == std::string_view::npos ? atol : tolerance_number(values.substr(colon + 1), setting);
  if (!rtol) return rtol.error();
  if (dtype.empty()) {
    p.atol = *atol;
    p.rtol = *rtol;
  } else {
    p.dtype_tolerance[std::string(dtype)] = {*atol, *rtol};
  }
  return {};
}

double protocol_options::stop_target(double speedup, double rel_stderr) const {
  const double se = rel_stderr * speedup;
  const bool far = stop_far_factor > 1 && (speedup - 3 * se >= stop_far_factor || speedup + 3 * se <= 1 / stop_far_factor);
  return far ? std::max(stop_relative_stderr, stop_far_relative_stderr) : stop_relative_stderr;
}

std::string protocol_options::text() const {
  return fmt::format(
      "protocol {}: {} trials {}{}, warmup {}, {} buckets ({}), void > {}{}, "
      "rounds {}..{}, window {} s, early stop {}",
      name, correctness_trials, tolerances().text(), strict ? " (strict)" : "",
      warmup_rounds, buckets, to_string(statistic), balanced_order ? ", order-balanced" : "", void_variance, relative_variance ? " (relative)" : "", min_rounds, max_rounds,
      window_s, early_stop ? "on" : "off");
}

result<protocol_options> protocol_by_name(std::string_view name) {
  protocol_options p;
  if (name == "default") return p;
  if (name == "paper") {
    p.name = "paper";
    p.correctness_trials = 1000;
    p.correctness_batch = 50;
    p.early_stop = false;
    p.window_s = 1800;
    p.relative_variance = false;
    p.statistic = bucket_statistic::arithmetic;
    p.balanced_order = false;
    p.cpu_time_on_cpu = false;
    p.device_clock = false;
    return p;
  }
  if (name == "quick") {
    p.name = "quick";
    p.correctness_trials = 8;
    p.warmup_rounds = 3;
    p.min_rounds = 70;
    p.stop_relative_stderr = 0.005;
    p.window_s = 20;
    p.load_timeout_s = 60;
    p.candidate_load_timeout_s = 10;
    return p;
  }
  if (name == "smoke") {
    // The CPU quick-start's loop (configs/quickstart.toml): two cores shared
    // with the learner and the rollouts, and candidates that differ by 1.3x
    // to 30x, so a shorter window serves; identity lands within about 2%.
    p = protocol_by_name("quick").value();
    p.name = "smoke";
    p.min_rounds = 20;
    p.stop_relative_stderr = 0.01;
    p.window_s = 4;
    return p;
  }
  return make_error(errc::invalid_argument,
                    fmt::format("unknown protocol '{}' (default, paper, quick, smoke)", name));
}

std::vector<std::string> protocol_names() { return {"default", "paper", "quick", "smoke"}; }

}  // namespace crucible::evaluator
