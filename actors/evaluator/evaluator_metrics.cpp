#include "actors/evaluator/evaluator_metrics.hpp"

#include "runtime/metrics/families.hpp"

namespace crucible::evaluator {

namespace p = prometheus;

struct evaluator_metrics::families {
  families(metrics::registry_ptr r, std::string evaluator, std::string device)
      : registry(std::move(r)), evaluator(std::move(evaluator)), device(std::move(device)),
        evaluations(metrics::counter(*registry, "crucible_evaluator_evaluations_total",
                                     "Evaluations answered, by evaluator, device and status (ok, incorrect, hack, ...)")),
        defences(metrics::counter(*registry, "crucible_evaluator_defences_fired_total",
                                  "Evaluations in which a defence fired, by evaluator, device and defence")),
        phases(metrics::histogram(*registry, "crucible_evaluator_phase_seconds",
                                  "Seconds an evaluation spent in each phase (compile, load_task, correctness, ...)")),
        busy(metrics::counter(*registry, "crucible_evaluator_busy_seconds_total",
                              "Seconds the evaluator spent evaluating (its rate: the share of time the device is busy)")
                 .Add(labels())),
        cache(metrics::counter(*registry, "crucible_evaluator_compile_cache_total",
                               "Candidates with an inline extension, by whether its build came from the compile cache "
                               "(result: hit, miss)")) {}

  p::Labels labels(p::Labels more = {}) const {
    more.emplace("evaluator", evaluator);
    more.emplace("device", device);
    return more;
  }

  metrics::registry_ptr registry;
  std::string evaluator, device;
  p::Family<p::Counter>& evaluations;
  p::Family<p::Counter>& defences;
  p::Family<p::Histogram>& phases;
  p::Counter& busy;
  p::Family<p::Counter>& cache;
};

evaluator_metrics::evaluator_metrics(metrics::registry_ptr registry, std::string evaluator, std::string device)
    : f_(std::make_unique<families>(std::move(registry), std::move(evaluator), std::move(device))) {}
evaluator_metrics::~evaluator_metrics() = default;

void evaluator_metrics::record(const evaluation& e) {
  static const p::Histogram::BucketBoundaries seconds{0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300};
  f_->evaluations.Add(f_->labels({{"status", std::string(to_string(e.status))}})).Increment();
  for (const auto& d : e.defences_fired) f_->defences.Add(f_->labels({{"defence", d}})).Increment();
  for (const auto& [phase, s] : e.phase_s) f_->phases.Add(f_->labels({{"phase", phase}}), seconds).Observe(s);
  f_->busy.Increment(e.duration_s);
  if (e.compiled) f_->cache.Add(f_->labels({{"result", e.compile_cache_hit ? "hit" : "miss"}})).Increment();
}

}  // namespace crucible::evaluator
