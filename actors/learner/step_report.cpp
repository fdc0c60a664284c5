#include "actors/learner/step_report.hpp"

#include <fstream>
#include <nlohmann/json.hpp>

namespace crucible::learner {

std::string step_report::json() const {
  nlohmann::json stale = nlohmann::json::object();
  for (const auto& [age, groups] : staleness) stale[std::to_string(age)] = groups;
  nlohmann::json j = {
      {"objective", objective}, {"version", version}, {"optimizer_steps", optimizer_steps}, {"loss", loss},
      {"kl", kl}, {"clip_fraction", clip_fraction}, {"weight_mean", weight_mean}, {"weight_min", weight_min},
      {"weight_max", weight_max}, {"truncated_fraction", truncated_fraction}, {"grad_norm", grad_norm},
      {"learning_rate", learning_rate}, {"reward_mean", reward_mean}, {"smoothed_reward_mean", smoothed_reward_mean},
      {"staleness", stale}, {"sequences", sequences}, {"tokens", tokens}, {"seconds", seconds},
      {"tokens_per_second", tokens_per_second}, {"gradient_bytes", gradient_bytes},
      {"optimizer_state_bytes", optimizer_state_bytes},
  };
  if (!groups.empty()) j["groups"] = groups;
  return j.dump();
}

status append_metrics(const std::filesystem::path& path, const step_report& report) {
  std::ofstream out(path, std::ios::app);
  out << report.json() << '\n';
  out.flush();
  if (!out) return make_error(errc::io, path.string() + ": cannot append metrics");
  return status::success();
}

}  // namespace crucible::learner
