#include "actors/evaluator/protocol.hpp"

#include <fmt/format.h>

namespace crucible::evaluator {

std::string protocol_options::text() const {
  return fmt::format(
      "protocol {}: {} trials atol={} rtol={}{}, warmup {}, {} buckets ({}), void > {}{}, "
      "rounds {}..{}, window {} s, early stop {}",
      name, correctness_trials, effective_atol(), effective_rtol(), strict ? " (strict)" : "",
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
