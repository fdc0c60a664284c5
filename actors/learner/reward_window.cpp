#include "actors/learner/reward_window.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace crucible::learner {

reward_window::reward_window(std::size_t capacity) : capacity_(std::max<std::size_t>(capacity, 1)) {}

void reward_window::add(std::span<const double> rewards) {
  for (double r : rewards) {
    rewards_.push_back(r);
    if (rewards_.size() > capacity_) rewards_.pop_front();
  }
}

double reward_window::mean() const {
  if (rewards_.empty()) return 0;
  double sum = 0;
  for (double r : rewards_) sum += r;
  return sum / static_cast<double>(rewards_.size());
}

double reward_window::stddev() const {
  if (rewards_.size() < 2) return 0;
  const double mu = mean();
  double sq = 0;
  for (double r : rewards_) sq += (r - mu) * (r - mu);
  return std::sqrt(sq / static_cast<double>(rewards_.size()));
}

void reward_window::restore(std::span<const double> values) {
  rewards_.clear();
  add(values);
}

std::string reward_window::text() const {
  std::ostringstream s;
  s << "rewards n=" << rewards_.size() << " mu=" << mean() << " sigma=" << stddev();
  return s.str();
}

}  // namespace crucible::learner
