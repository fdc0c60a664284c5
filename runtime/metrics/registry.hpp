// The handle every role's metrics are registered on: a prometheus-cpp
// Registry, forward-declared so that headers which pass it on do not include
// prometheus-cpp. Null means metrics are off (no --metrics and no
// [metrics] listen); a role then records nothing. The registry is
// thread-safe (prometheus-cpp), and so are the counters, gauges and
// histograms registered on it: any actor may update its own.
#pragma once

#include <memory>

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace crucible::metrics {

using registry_ptr = std::shared_ptr<prometheus::Registry>;

}  // namespace crucible::metrics
