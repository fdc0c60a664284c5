#include "runtime/node/job_runner.hpp"

#include <algorithm>
#include <unordered_map>

namespace crucible::node {

namespace {
using clock_type = std::chrono::steady_clock;

double percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  auto k = static_cast<std::size_t>(p * static_cast<double>(v.size() - 1));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}
}  // namespace

job_report run_jobs(bus::transport& transport, bus::peer_options client, const std::vector<job_spec>& jobs,
                    const job_run_options& options) {
  job_report report;
  bus::client_session session(std::move(client));
  auto start = clock_type::now();
  auto deadline = start + std::chrono::duration_cast<clock_type::duration>(options.timeout);
  session.start(start);
  std::unordered_map<std::string, clock_type::time_point> sent_at;
  std::vector<double> latency_us;
  latency_us.reserve(jobs.size());
  std::size_t next = 0;
  std::vector<bus::frame> frames;
  clock_type::time_point first_submit{};
  auto flush = [&] {
    auto out = session.take_outbox();
    bus::transmit(transport, out);
  };

  while (report.completed + report.failed < jobs.size()) {
    auto now = clock_type::now();
    if (now > deadline || (options.cancelled && options.cancelled())) break;
    if (session.registered()) {
      if (first_submit == clock_type::time_point{}) first_submit = now;
      while (next < jobs.size() && session.outstanding() < options.in_flight) {
        auto& j = jobs[next++];
        session.submit(j.id, j.kind, j.payload, now);
        sent_at[j.id] = now;
      }
    }
    flush();
    frames.clear();
    (void)transport.receive(frames, 4096, std::chrono::milliseconds(5));
    now = clock_type::now();
    for (auto& f : frames) session.on_frame(f, now);
    session.on_tick(now);
    for (auto& r : session.take_results()) {
      (r.status == msg::JobStatus::Ok ? report.completed : report.failed) += 1;
      if (auto it = sent_at.find(r.id); it != sent_at.end()) {
        latency_us.push_back(std::chrono::duration<double, std::micro>(now - it->second).count());
        sent_at.erase(it);
      }
      if (options.on_result) options.on_result(r);
      if (options.keep_results) report.results.push_back(std::move(r));
    }
  }
  flush();  // the last acknowledgements
  frames.clear();
  (void)transport.receive(frames, 1, std::chrono::milliseconds(20));

  auto from = first_submit == clock_type::time_point{} ? start : first_submit;
  report.submitted = next;
  report.missing = jobs.size() - report.completed - report.failed;
  report.duplicate_results = session.duplicate_results();
  report.resends = session.resends();
  report.elapsed_s = std::chrono::duration<double>(clock_type::now() - from).count();
  report.jobs_per_s = report.elapsed_s > 0 ? static_cast<double>(report.completed + report.failed) / report.elapsed_s : 0;
  report.p50_us = percentile(latency_us, 0.50);
  report.p99_us = percentile(latency_us, 0.99);
  return report;
}

}  // namespace crucible::node
