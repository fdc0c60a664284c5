// `crucible evaluator`: one device's evaluator as a service on the bus. It
// takes measure and verify:MODEL jobs whose payload is a Candidate, finds the
// task's source under --tasks, measures with the evaluator actor, and answers
// with a Measurement.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "actors/evaluator/device.hpp"
#include "actors/evaluator/evaluator_actor.hpp"
#include "actors/evaluator/evaluator_metrics.hpp"
#include "runtime/node/ask.hpp"
#include "runtime/node/worker_actor.hpp"
#include "runtime/roles/roles.hpp"
#include "runtime/roles/serve.hpp"

namespace crucible::roles {

namespace {

namespace fs = std::filesystem;
namespace ev = crucible::evaluator;
using messages::str;

// The task file for a task id: ROOT/ID/task.py, ROOT/ID.py or ROOT/ID.
result<std::string> task_source(const fs::path& root, std::string_view task_id) {
  if (task_id.empty() || task_id.find("..") != std::string_view::npos || task_id.front() == '/')
    return make_error(errc::invalid_argument, "task id '" + std::string(task_id) + "' is not a relative path");
  for (const fs::path& p : {root / task_id / "task.py", root / (std::string(task_id) + ".py"), root / task_id}) {
    if (!fs::is_regular_file(p)) continue;
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  return make_error(errc::not_found, "no task '" + std::string(task_id) + "' under " + root.string());
}

// One line of `nvidia-smi --query-gpu=FIELDS --format=csv,noheader,nounits`
// for the device, or "" when nvidia-smi is not there.
std::string query_gpu(const ev::device_spec& d, const std::string& fields) {
  std::string cmd = "nvidia-smi --query-gpu=" + fields + " --format=csv,noheader,nounits -i " +
                    std::to_string(d.index) + " 2>/dev/null";
  std::string out;
  if (FILE* p = ::popen(cmd.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

// What verify jobs for this device are called: same model, another evaluator.
std::string device_model(const ev::device_spec& d) {
  if (!d.cuda) return "cpu";
  std::string name = query_gpu(d, "name");
  return name.empty() ? "cuda" : name;
}

// The GPU's SM clock (MHz) and temperature (C) as a measurement starts,
// recorded with its result; zeros on CPU.
struct gpu_state {
  std::uint32_t clock_mhz = 0;
  std::int32_t temperature_c = 0;
};
gpu_state read_gpu_state(const ev::device_spec& d) {
  gpu_state g;
  if (!d.cuda) return g;
  std::string line = query_gpu(d, "clocks.sm,temperature.gpu");
  std::sscanf(line.c_str(), "%u, %d", &g.clock_mhz, &g.temperature_c);
  return g;
}

msg::EvalStatus wire_status(ev::eval_status s) { return static_cast<msg::EvalStatus>(static_cast<int>(s)); }

bus::bytes measurement_envelope(const ev::evaluation& e, const msg::Candidate& c, const std::string& evaluator,
                                const std::string& model, bool verify, gpu_state gpu) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<flatbuffers::Offset<flatbuffers::String>> fired;
  for (auto& d : e.defences_fired) fired.push_back(fbb.CreateString(d));
  auto m = msg::CreateMeasurement(
      fbb, fbb.CreateString(str(c.candidate_id())), fbb.CreateString(str(c.task_id())), wire_status(e.status),
      fbb.CreateString(e.reason), e.speedup_raw, e.reward, fbb.CreateVector(e.bucket_means), e.bucket_variance,
      static_cast<std::uint32_t>(e.rounds), e.correctness_trials, e.ref_us, e.cand_us, fbb.CreateString(e.device),
      fbb.CreateString(model), fbb.CreateString(evaluator), e.duration_s, e.seed, fbb.CreateVector(fired), verify,
      gpu.clock_mhz, gpu.temperature_c);
  return w.finish(m, evaluator, str(c.candidate_id()));
}

class evaluator_handler final : public node::job_handler {
 public:
  evaluator_handler(caf::actor_system& sys, ev::evaluator_actor actor, std::shared_ptr<ev::cpu_stage> cpu,
                    fs::path tasks, ev::device_spec device, std::string model, ev::protocol_options protocol,
                    std::string name, std::shared_ptr<ev::evaluator_metrics> metrics)
      : sys_(sys), actor_(std::move(actor)), cpu_(std::move(cpu)), tasks_(std::move(tasks)), spec_(device),
        device_(device.text()), model_(std::move(model)), protocol_(std::move(protocol)), name_(std::move(name)),
        metrics_(std::move(metrics)) {}

  void run(const bus::worker_session::job_request& job, done_fn done) override {
    bool verify = job.kind.rfind("verify:", 0) == 0;
    if (job.kind != "measure" && !verify)
      return done(msg::JobStatus::Failed, {}, "the evaluator does not serve jobs of kind '" + job.kind + "'");
    auto env = messages::open(job.payload);
    if (!env) return done(msg::JobStatus::Failed, {}, job.kind + " payload: " + env.error().message);
    auto* c = (*env)->payload_as_Candidate();
    if (!c) return done(msg::JobStatus::Failed, {}, job.kind + " needs a Candidate payload");
    auto task = task_source(tasks_, str(c->task_id()));
    if (!task) return done(msg::JobStatus::Failed, {}, task.error().message);
    ev::eval_request req;
    req.task_source = std::move(*task);
    req.candidate_source = std::string(str(c->code()));
    req.task_id = std::string(str(c->task_id()));
    req.device = device_;
    // One seed per candidate, recorded with the result; a verification uses another.
    req.seed = std::hash<std::string>{}(std::string(str(c->candidate_id())) + (verify ? "/verify" : ""));
    auto candidate = bus::bytes(job.payload);
    // Queued behind the running job (when the hub gave this one a prefetch
    // slot): its syntax check and compile start now, on other cores.
    cpu_->ahead(req.candidate_source, req.task_source);
    gpu_state gpu = read_gpu_state(spec_);
    node::ask<ev::evaluation>(
        sys_, actor_,
        [done, candidate, name = name_, model = model_, verify, gpu, metrics = metrics_](ev::evaluation& e) {
          auto cenv = messages::open(candidate);
          spdlog::info("{}", e.text());
          if (metrics) metrics->record(e);
          done(msg::JobStatus::Ok,
               measurement_envelope(e, *(*cenv)->payload_as_Candidate(), name, model, verify, gpu), {});
        },
        [done](const caf::error& e) { done(msg::JobStatus::Failed, {}, caf::to_string(e)); },
        ev::evaluate_atom::value, std::move(req), protocol_);
  }

 private:
  caf::actor_system& sys_;
  ev::evaluator_actor actor_;
  std::shared_ptr<ev::cpu_stage> cpu_;
  fs::path tasks_;
  ev::device_spec spec_;
  std::string device_, model_;
  ev::protocol_options protocol_;
  std::string name_;
  std::shared_ptr<ev::evaluator_metrics> metrics_;  // null: metrics off
};

struct evaluator_args {
  role_args common;
  evaluator_service_options service;
};

}  // namespace

std::uint32_t evaluator_slots(const evaluator_service_options& o) {
  const bool gpu = o.device.rfind("cuda", 0) == 0;
  return 1 + static_cast<std::uint32_t>(o.prefetch >= 0 ? o.prefetch : gpu ? 2 : 0);
}

result<service> spawn_evaluator_service(caf::actor_system& sys, const evaluator_service_options& o,
                                        const std::string& name) {
  auto device = ev::parse_device(o.device);
  if (!device) return device.error();
  auto protocol = ev::protocol_by_name(o.protocol);
  if (!protocol) return protocol.error();
  protocol->strict = o.strict;
  for (const auto& t : o.tolerances) CRUCIBLE_TRY(ev::apply_tolerance(*protocol, t));
  if (!fs::is_directory(o.tasks))
    return make_error(errc::invalid_argument, "tasks folder '" + o.tasks.string() + "' is not a directory");
  std::string model = device_model(*device);
  ev::evaluator_options eo;
  if (!o.cores.empty()) eo.limits.cores = o.cores;
  eo.warm_spares = o.warm_spares;
  auto cache = std::make_shared<ev::compile_cache>(eo.compile);
  auto cpu = std::make_shared<ev::cpu_stage>(cache, eo.worker, eo.limits, eo.scratch_root);
  auto actor = ev::spawn_evaluator(sys, eo, cache, cpu);
  caf::anon_send(actor, ev::prime_atom::value, device->text());
  auto metrics = o.metrics ? std::make_shared<ev::evaluator_metrics>(o.metrics, name, device->text()) : nullptr;
  return service{std::make_shared<evaluator_handler>(sys, actor, cpu, o.tasks, *device, model, *protocol, name,
                                                     std::move(metrics)),
                 {"measure", "verify:" + model},
                 caf::actor_cast<caf::actor>(actor),
                 "evaluator on " + device->text() + " (" + model + "), protocol " + protocol->name + ", tasks under " +
                     o.tasks.string()};
}

cli::command add_evaluator_role(CLI::App& app) {
  auto a = std::make_shared<evaluator_args>();
  auto* cmd = app.add_subcommand("evaluator", "Run an evaluator on one device (a GPU, or a CPU core set) that "
                                              "measures candidates for the hub (measure and verify jobs)");
  cmd->add_option("--device", a->service.device, "cpu or cuda:N (default cpu)");
  cmd->add_option("--tasks", a->service.tasks, "root of the task files; a task id names ROOT/ID/task.py or ROOT/ID.py");
  cmd->add_option("--protocol", a->service.protocol, "measurement protocol: default, paper, quick, ...");
  cmd->add_option("--cores", a->service.cores, "CPU cores for its sandbox workers (default: the last core)")
      ->delimiter(',');
  cmd->add_flag("--strict", a->service.strict,
                "strict correctness: atol = rtol = 1e-5 (float16 1e-3, bfloat16 1e-2) instead of 1e-2");
  cmd->add_option("--tolerance", a->service.tolerances,
                  "ATOL[:RTOL] for every output, or DTYPE=ATOL[:RTOL] for outputs of that torch dtype "
                  "(float16, bfloat16, ...); repeatable, after --strict");
  cmd->add_option("--prefetch", a->service.prefetch,
                  "jobs held beyond the one measured, compiled ahead on other cores (default 2 on a GPU, 0 on CPU)");
  add_role_options(*cmd, a->common, "evaluator");
  // One evaluation at a time owns the device; the prefetched jobs wait in
  // the actor's mailbox, in order.
  return {cmd, [a] {
            return serve("evaluator", msg::Role::Evaluator, evaluator_slots(a->service), a->common,
                         [a](caf::actor_system& sys, const std::string& name, const metrics::registry_ptr& m) {
                           auto options = a->service;
                           options.metrics = m;
                           return spawn_evaluator_service(sys, options, name);
                         });
          }};
}

}  // namespace crucible::roles
