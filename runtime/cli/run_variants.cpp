// `crucible run` job "variants": settles every variant file of the task set
// once through the referee (measured, verified when its speedup calls for
// it, judged by the registered detectors, settled once), which inserts clean
// successes into the exemplar store; then draws contrastive exemplars per
// task. A smoke job for the whole reward path (configs/variants.toml).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "actors/referee/referee_wire.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/cli/run_jobs.hpp"
#include "runtime/cli/run_stack.hpp"
#include "runtime/log/log.hpp"
#include "runtime/node/caf_types.hpp"
#include "runtime/node/job_runner.hpp"

namespace crucible::cli {

namespace {
namespace fs = std::filesystem;
using messages::str;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bus::bytes query_envelope(const std::string& task, std::uint32_t n, double temperature, std::uint64_t seed) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  auto q = msg::CreateExemplarQuery(fbb, fbb.CreateString(task), n, temperature, seed);
  return w.finish(q, "run", task);
}

}  // namespace

int run_variants(const config::file& file, run_options run, const std::string& dir,
                 const metrics::registry_ptr& metrics) {
  if (run.tasks.empty()) {
    std::error_code ec;
    for (auto& e : fs::directory_iterator(fs::path(run.tasks_dir) / "cpu", ec))
      if (fs::is_regular_file(e.path() / "task.py")) run.tasks.push_back("cpu/" + e.path().filename().string());
    std::sort(run.tasks.begin(), run.tasks.end());
    if (run.tasks.empty()) return fail("[run] no tasks: nothing under " + run.tasks_dir + "/cpu");
  }
  // The candidates: every variant file of every task, each a settle job.
  std::vector<node::job_spec> settle_jobs;
  for (auto& task : run.tasks)
    for (auto& v : run.variants) {
      fs::path file_path = fs::path(run.tasks_dir) / task / (v + ".py");
      if (!fs::is_regular_file(file_path)) continue;
      std::string id = task + "/" + v;
      settle_jobs.push_back({"settle/" + id, "settle", referee::candidate_envelope(id, task, slurp(file_path), "run")});
    }

  install_signal_handlers();
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  auto stack = run_stack::start(sys, file, run, dir, metrics);
  if (!stack) return fail(stack.error());
  auto client_transport = (*stack)->connect("run-client");
  if (!client_transport) return fail(client_transport.error());
  bus::peer_options client;
  client.name = "run-client";
  client.node = logging::host_name();
  std::printf("crucible run: %zu candidates of %zu tasks settled by the referee, measured by %u evaluator(s), "
              "protocol %s\n",
              settle_jobs.size(), run.tasks.size(), run.evaluators, run.protocol.c_str());
  std::printf("%-34s %-8s %7s %9s %8s  %s\n", "candidate", "status", "reward", "speedup", "verified", "reason");
  std::fflush(stdout);

  // 1. Settle every candidate (the referee measures, verifies, judges and
  // inserts clean successes into the exemplar store before it answers).
  nlohmann::json rows = nlohmann::json::array();
  std::map<std::string, std::size_t> by_status;
  node::job_run_options jr;
  jr.cancelled = shutdown_requested;
  jr.timeout = std::chrono::duration<double>(run.timeout_s);
  jr.in_flight = 64;
  jr.on_result = [&](const bus::client_session::job_result& r) {
    std::string id = r.id.substr(std::string("settle/").size());
    auto env = messages::open(r.payload);
    const msg::Settlement* s = env ? (*env)->payload_as_Settlement() : nullptr;
    if (r.status != msg::JobStatus::Ok || !s) {
      std::printf("%-34s %-8s %7s %9s %8s  %s\n", id.c_str(), "job_failed", "-", "-", "-", r.error.c_str());
      rows.push_back({{"candidate", id}, {"status", "job_failed"}, {"reason", r.error}});
      std::fflush(stdout);
      return;
    }
    std::string status = msg::EnumNameSettlementStatus(s->status());
    ++by_status[status];
    std::string reason(str(s->reason()));
    if (reason.size() > 60) reason = reason.substr(0, 57) + "...";
    std::printf("%-34s %-8s %7.2f %9.3f %8s  %s\n", id.c_str(), status.c_str(), s->reward(), s->speedup_raw(),
                s->verified() ? "yes" : "no", reason.c_str());
    std::fflush(stdout);
    rows.push_back({{"candidate", id}, {"status", status}, {"reward", s->reward()}, {"speedup_raw", s->speedup_raw()},
                    {"verified", s->verified()}, {"reason", std::string(str(s->reason()))}});
  };
  auto settled = node::run_jobs(**client_transport, client, settle_jobs, jr);

  // 2. Contrastive draws per task from what the referee stored.
  jr.on_result = nullptr;
  jr.keep_results = true;
  std::vector<node::job_spec> sample_jobs;
  for (auto& task : run.tasks)
    sample_jobs.push_back(
        {"sample/" + task, "exemplar.sample", query_envelope(task, run.exemplars, run.exemplar_temperature, 1)});
  auto sampled = node::run_jobs(**client_transport, client, sample_jobs, jr);
  nlohmann::json draws = nlohmann::json::object();
  std::printf("\ncontrastive exemplars drawn per task (Equation 1, temperature %.2f):\n", run.exemplar_temperature);
  for (auto& r : sampled.results) {
    auto env = messages::open(r.payload);
    const msg::ExemplarAnswer* ans = env ? (*env)->payload_as_ExemplarAnswer() : nullptr;
    if (!ans) continue;
    std::string line;
    for (auto x : *ans->exemplars()) {
      line += fmt::format("  score {:.2f} (bucket mean {:.2f})", x->score(), x->bucket_mean());
      draws[std::string(str(ans->task_id()))].push_back({{"score", x->score()}, {"bucket_mean", x->bucket_mean()}});
    }
    std::printf("  %-26s%s\n", std::string(str(ans->task_id())).c_str(), line.empty() ? "  (no exemplars yet)" : line.c_str());
  }

  std::size_t successes = by_status["Success"];
  std::size_t verified = std::count_if(rows.begin(), rows.end(), [](auto& r) { return r.value("verified", false); });
  nlohmann::json summary = {{"candidates", settle_jobs.size()}, {"settled", settled.completed},
                            {"job_failures", settled.failed}, {"missing", settled.missing},
                            {"settlements", by_status}, {"successes", successes}, {"verified", verified},
                            {"elapsed_s", settled.elapsed_s}, {"protocol", run.protocol},
                            {"rows", rows}, {"draws", draws}, {"run_dir", dir}};
  std::ofstream(dir + "/summary.json") << summary.dump(2) << "\n";
  std::string counts;
  for (auto& [status, n] : by_status) counts += fmt::format("{}{} {}", counts.empty() ? "" : ", ", n, status);
  std::printf("\n%llu/%zu candidates settled (%s; %zu verified) in %.1f s; clean successes went to the exemplar "
              "store; run folder %s\n",
              static_cast<unsigned long long>(settled.completed), settle_jobs.size(),
              counts.empty() ? "none" : counts.c_str(), verified, settled.elapsed_s, dir.c_str());
  (*stack)->stop();
  return settled.missing == 0 && settled.failed == 0 ? 0 : 1;
}

}  // namespace crucible::cli
