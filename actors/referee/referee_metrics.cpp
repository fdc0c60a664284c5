#include "actors/referee/referee_metrics.hpp"

#include <cctype>

#include "runtime/metrics/families.hpp"

namespace crucible::referee {

struct referee_metrics::families {
  explicit families(metrics::registry_ptr r)
      : registry(std::move(r)),
        settlements(metrics::counter(*registry, "crucible_referee_settlements_total",
                                     "Candidates settled, by verdict (success, failure, void, hack) and verified "
                                     "(true: a second evaluator agreed)")) {}
  metrics::registry_ptr registry;
  prometheus::Family<prometheus::Counter>& settlements;
};

referee_metrics::referee_metrics(metrics::registry_ptr registry)
    : f_(std::make_unique<families>(std::move(registry))) {}
referee_metrics::~referee_metrics() = default;

void referee_metrics::record(msg::SettlementStatus verdict, bool verified) {
  std::string name = msg::EnumNameSettlementStatus(verdict);
  for (auto& ch : name) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  f_->settlements.Add({{"verdict", name}, {"verified", verified ? "true" : "false"}}).Increment();
}

}  // namespace crucible::referee
