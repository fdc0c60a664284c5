// The referee's Prometheus families (docs/metrics.md): settlements by
// verdict (Success, Failure, Void, Hack) and whether they were verified.
// record() is called by the referee core once per settlement, on the
// referee actor's thread.
#pragma once

#include <memory>

#include "messages/domain_generated.h"
#include "runtime/metrics/registry.hpp"

namespace crucible::referee {

class referee_metrics {
 public:
  explicit referee_metrics(metrics::registry_ptr registry);
  ~referee_metrics();

  void record(msg::SettlementStatus verdict, bool verified);

 private:
  struct families;
  std::unique_ptr<families> f_;
};

}  // namespace crucible::referee
