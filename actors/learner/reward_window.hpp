// The window of recent settled rewards that reward smoothing normalises
// against (the paper's r_n = (r - mu) / sigma, clipped to [-k, k]). The
// trainer owns one; it is saved in checkpoints. Not thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <span>
#include <string>
#include <vector>

namespace crucible::learner {

class reward_window {
 public:
  // Keeps the `capacity` most recent rewards (at least 1).
  explicit reward_window(std::size_t capacity);

  // Appends rewards in order, dropping the oldest beyond capacity.
  void add(std::span<const double> rewards);
  // Mean and population standard deviation of the rewards held (0 and 0 when
  // empty; sigma is 0 for a window of one).
  double mean() const;
  double stddev() const;

  std::size_t capacity() const { return capacity_; }
  std::size_t size() const { return rewards_.size(); }
  // The rewards held, oldest first (checkpoints save and restore these).
  std::vector<double> values() const { return {rewards_.begin(), rewards_.end()}; }
  void restore(std::span<const double> values);
  std::string text() const;  // "rewards n=12 mu=0.53 sigma=0.21"

 private:
  std::size_t capacity_;
  std::deque<double> rewards_;
};

}  // namespace crucible::learner
