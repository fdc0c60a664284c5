#include "actors/evaluator/cores_beside.hpp"

#include <algorithm>

#include "runtime/base/compute_tuning.hpp"

namespace crucible::evaluator {

std::vector<int> cores_beside(const std::vector<int>& measuring) {
  if (measuring.empty()) return {};
  std::vector<int> other;
  for (int c : allowed_cores())
    if (std::find(measuring.begin(), measuring.end(), c) == measuring.end()) other.push_back(c);
  return other.empty() ? measuring : other;
}

}  // namespace crucible::evaluator
