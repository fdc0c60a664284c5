#include "actors/learner/schedule.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace crucible::learner {

double scheduled_learning_rate(double peak, std::uint64_t step, std::uint64_t warmup_steps, std::uint64_t total_steps,
                               double min_lr_ratio) {
  if (step < warmup_steps) return peak * static_cast<double>(step + 1) / static_cast<double>(warmup_steps + 1);
  if (total_steps == 0) return peak;
  const double span = static_cast<double>(std::max<std::uint64_t>(total_steps - warmup_steps, 1));
  const double progress = std::min(1.0, static_cast<double>(step - warmup_steps) / span);
  const double floor = peak * min_lr_ratio;
  return floor + (peak - floor) * 0.5 * (1.0 + std::cos(std::numbers::pi * progress));
}

}  // namespace crucible::learner
