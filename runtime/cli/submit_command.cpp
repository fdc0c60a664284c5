// `crucible submit`: submits N jobs to a hub and waits for every result
// (resending as the protocol says); prints a summary with throughput and
// round-trip latency. Used by the integration tests and tools/bench_bus.sh.
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "runtime/bus/zmq_transport.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/log/log.hpp"
#include "runtime/node/job_runner.hpp"

namespace crucible::cli {

namespace {
struct submit_args {
  std::string connect = "tcp://127.0.0.1:5555", name, kind = "echo", payload, id_prefix, log_level = "warn";
  std::string candidate, task;  // a Candidate payload (measure jobs)
  std::string keys;             // CURVE key folder
  bool print_results = false;
  std::uint64_t count = 1, payload_bytes = 0, in_flight = 256;
  double timeout_s = 60;
  bool json = false;
};

// One result as JSON: its status, and the measurement when it carries one.
nlohmann::json result_json(const bus::client_session::job_result& r) {
  nlohmann::json j = {{"id", r.id}, {"status", msg::EnumNameJobStatus(r.status)}, {"worker", r.worker},
                      {"error", r.error}, {"payload_bytes", r.payload.size()}};
  auto env = messages::open(r.payload);
  if (env && (*env)->payload_type() == msg::Payload::Measurement) {
    auto* m = (*env)->payload_as_Measurement();
    j["measurement"] = {{"status", msg::EnumNameEvalStatus(m->status())}, {"reward", m->reward()},
                        {"speedup_raw", m->speedup_raw()}, {"rounds", m->rounds()},
                        {"device", messages::str(m->device())}, {"evaluator", messages::str(m->evaluator())},
                        {"reason", messages::str(m->reason())}};
  }
  return j;
}

int run_submit(const submit_args& a) {
  logging::log_options log;
  log.level = a.log_level;
  bus::peer_options options;
  options.name = a.name.empty() ? default_name("client") : a.name;
  options.node = logging::host_name();
  if (auto s = logging::init("client", options.node, log); !s) return fail(s.error());
  auto transport = bus::connect_peer_transport(a.connect, options.name, {.keys = a.keys});
  if (!transport) return fail(transport.error());
  install_signal_handlers();

  bus::bytes payload(a.payload.begin(), a.payload.end());
  if (a.payload.empty()) payload.assign(a.payload_bytes, 0x5a);
  std::string prefix = a.id_prefix.empty() ? options.name + "-" : a.id_prefix;
  if (!a.candidate.empty()) {
    std::ifstream in(a.candidate);
    if (!in) return fail("--candidate '" + a.candidate + "' cannot be read");
    std::stringstream code;
    code << in.rdbuf();
    messages::envelope_writer w;
    auto& fbb = w.fbb();
    auto c = msg::CreateCandidate(fbb, fbb.CreateString(prefix + "candidate"), fbb.CreateString(a.task),
                                  fbb.CreateString(code.str()));
    payload = w.finish(c, options.name, prefix + "candidate");
  }
  std::vector<node::job_spec> jobs;
  jobs.reserve(a.count);
  for (std::uint64_t i = 0; i < a.count; ++i) jobs.push_back({prefix + std::to_string(i), a.kind, payload});

  node::job_run_options run;
  run.in_flight = a.in_flight;
  run.timeout = std::chrono::duration<double>(a.timeout_s);
  run.cancelled = shutdown_requested;
  run.on_result = [&a](const bus::client_session::job_result& r) {
    if (r.status != msg::JobStatus::Ok) spdlog::warn("job {} failed on {}: {}", r.id, r.worker, r.error);
    if (a.print_results) std::printf("%s\n", result_json(r).dump().c_str());
  };
  auto rep = node::run_jobs(**transport, options, jobs, run);
  if (a.json) {
    nlohmann::json out = {{"submitted", rep.submitted},   {"completed", rep.completed},
                          {"failed", rep.failed},         {"missing", rep.missing},
                          {"duplicate_results", rep.duplicate_results},
                          {"resends", rep.resends},       {"elapsed_s", rep.elapsed_s},
                          {"jobs_per_s", rep.jobs_per_s}, {"p50_us", rep.p50_us},
                          {"p99_us", rep.p99_us},         {"payload_bytes", payload.size()}};
    std::printf("%s\n", out.dump().c_str());
  } else {
    std::printf("%llu completed, %llu failed, %llu missing in %.2f s (%.0f jobs/s, p50 %.0f us, p99 %.0f us)\n",
                static_cast<unsigned long long>(rep.completed), static_cast<unsigned long long>(rep.failed),
                static_cast<unsigned long long>(rep.missing), rep.elapsed_s, rep.jobs_per_s, rep.p50_us, rep.p99_us);
  }
  return rep.missing ? 3 : (rep.failed ? 1 : 0);
}
}  // namespace

command add_submit_command(CLI::App& app) {
  auto a = std::make_shared<submit_args>();
  auto* cmd = app.add_subcommand("submit", "Submit jobs to a hub and wait for their results (tests, benchmarks); "
                                           "exit 0 when all succeed, 1 when some failed, 3 on timeout");
  cmd->add_option("--connect", a->connect, "hub address")->envname("CRUCIBLE_CONNECT");
  cmd->add_option("--name", a->name, "unique client name (default client-HOST-PID)");
  cmd->add_option("--keys", a->keys, "CURVE key folder of this node (crucible keys generate; [bus] keys); none: plain")->envname("CRUCIBLE_KEYS");
  cmd->add_option("--count", a->count, "jobs to submit (default 1)");
  cmd->add_option("--kind", a->kind, "job kind (default echo)");
  cmd->add_option("--payload", a->payload, "payload text (sleep jobs: milliseconds)");
  cmd->add_option("--payload-bytes", a->payload_bytes, "payload of this many bytes instead");
  cmd->add_option("--candidate", a->candidate, "payload: a Candidate with this file's code (with --task)");
  cmd->add_option("--task", a->task, "the task id of --candidate (e.g. cpu/gelu_tanh)");
  cmd->add_flag("--print-results", a->print_results, "print each result as one JSON line");
  cmd->add_option("--id-prefix", a->id_prefix, "job ids are PREFIX0, PREFIX1, ... (default NAME-)");
  cmd->add_option("--in-flight", a->in_flight, "most jobs outstanding at once (default 256)");
  cmd->add_option("--timeout-s", a->timeout_s, "give up after this many seconds (default 60)");
  cmd->add_option("--log-level", a->log_level, "default warn");
  cmd->add_flag("--json", a->json, "print one JSON object");
  return {cmd, [a] { return run_submit(*a); }};
}

}  // namespace crucible::cli
