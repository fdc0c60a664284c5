// The learning-rate schedule: linear warm-up (step s < warmup_steps runs at
// peak * (s + 1) / (warmup_steps + 1)), then a cosine from the peak down to min_lr_ratio * peak at
// total_steps (constant at the peak after warm-up when total_steps is 0).
// The trainer calls it before every optimizer step.
#pragma once

#include <cstdint>

namespace crucible::learner {

// The learning rate of optimizer step `step` (0-based).
double scheduled_learning_rate(double peak, std::uint64_t step, std::uint64_t warmup_steps, std::uint64_t total_steps,
                               double min_lr_ratio);

}  // namespace crucible::learner
