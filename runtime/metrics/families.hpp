// Short forms of prometheus-cpp's builders, for the files that register a
// role's families (hub_metrics.cpp, job_metrics.cpp, evaluator_metrics.cpp,
// ...). Includes prometheus-cpp: include it from .cpp files only.
#pragma once

#include <string>

#include <prometheus/counter.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

namespace crucible::metrics {

// The family of that name on r (the one already there when a role
// registers it again: several evaluators in one process share families).
inline prometheus::Family<prometheus::Counter>& counter(prometheus::Registry& r, const std::string& name,
                                                        const std::string& help) {
  return prometheus::BuildCounter().Name(name).Help(help).Register(r);
}
inline prometheus::Family<prometheus::Gauge>& gauge(prometheus::Registry& r, const std::string& name,
                                                    const std::string& help) {
  return prometheus::BuildGauge().Name(name).Help(help).Register(r);
}
inline prometheus::Family<prometheus::Histogram>& histogram(prometheus::Registry& r, const std::string& name,
                                                            const std::string& help) {
  return prometheus::BuildHistogram().Name(name).Help(help).Register(r);
}

}  // namespace crucible::metrics
