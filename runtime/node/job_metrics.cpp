#include "runtime/node/job_metrics.hpp"

#include <chrono>

#include "runtime/metrics/families.hpp"

namespace crucible::node {

namespace p = prometheus;

namespace {

class counting_handler final : public job_handler, public std::enable_shared_from_this<counting_handler> {
 public:
  counting_handler(std::shared_ptr<job_handler> inner, metrics::registry_ptr registry, std::string worker)
      : inner_(std::move(inner)), registry_(std::move(registry)), worker_(std::move(worker)),
        jobs_(metrics::counter(*registry_, "crucible_worker_jobs_total",
                               "Jobs a worker finished, by worker, kind and status (ok, failed)")),
        seconds_(metrics::histogram(*registry_, "crucible_worker_job_seconds",
                                    "Seconds from a job's arrival at a worker to its result, by worker and kind")) {}

  void run(const bus::worker_session::job_request& job, done_fn done) override {
    const auto started = std::chrono::steady_clock::now();
    // done may come after the worker dropped this handler: it keeps it.
    inner_->run(job, [self = shared_from_this(), kind = job.kind, started, done = std::move(done)](
                         msg::JobStatus status, bus::bytes payload, std::string error) {
      self->count(kind, status, std::chrono::steady_clock::now() - started);
      done(status, std::move(payload), std::move(error));
    });
  }

 private:
  void count(const std::string& kind, msg::JobStatus status, std::chrono::steady_clock::duration took) {
    jobs_.Add({{"worker", worker_}, {"kind", kind}, {"status", status == msg::JobStatus::Ok ? "ok" : "failed"}})
        .Increment();
    seconds_.Add({{"worker", worker_}, {"kind", kind}}, buckets()).Observe(std::chrono::duration<double>(took).count());
  }

  static const p::Histogram::BucketBoundaries& buckets() {
    static const p::Histogram::BucketBoundaries b{0.001, 0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 1800};
    return b;
  }

  std::shared_ptr<job_handler> inner_;
  metrics::registry_ptr registry_;
  std::string worker_;
  p::Family<p::Counter>& jobs_;
  p::Family<p::Histogram>& seconds_;
};

}  // namespace

std::shared_ptr<job_handler> counting_jobs(std::shared_ptr<job_handler> handler, const metrics::registry_ptr& registry,
                                           const std::string& worker) {
  if (!registry) return handler;
  return std::make_shared<counting_handler>(std::move(handler), registry, worker);
}

}  // namespace crucible::node
