#include "runtime/metrics/read_back.hpp"

#include <prometheus/registry.h>

namespace crucible::metrics {

double counter_sum(const registry_ptr& r, const std::string& name) {
  if (!r) return 0;
  double sum = 0;
  for (const auto& family : r->Collect())
    if (family.name == name)
      for (const auto& m : family.metric) sum += m.counter.value;
  return sum;
}

}  // namespace crucible::metrics
