// `crucible run CONFIG`: starts every role the config names in this process
// (the embedded default: one machine, the real bus over ipc in the run
// folder, one RocksDB per role) and runs the job. Today: the hub with its
// referee, CPU evaluators and the exemplar store; every candidate variant of
// the task set is submitted to the referee as a settle job (measured,
// verified when its speedup calls for it, judged by whatever detectors are
// registered, settled once), the referee inserts clean successes into the
// exemplar store, and contrastive exemplars are drawn for each task. The RL
// loop (issue 8) grows here.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "actors/referee/referee_host.hpp"
#include "actors/referee/referee_wire.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/config/runtime_options.hpp"
#include "runtime/node/hub_actor.hpp"
#include "runtime/node/job_runner.hpp"
#include "runtime/roles/roles.hpp"
#include "storage/rocksdb_store.hpp"

namespace crucible::cli {

namespace {
namespace fs = std::filesystem;
using messages::str;

// [run]: what `crucible run` starts and measures.
struct run_options {
  std::uint32_t evaluators = 1;               // CPU evaluators in this process
  std::string protocol = "quick";             // measurement protocol
  std::string tasks_dir = "configs/tasks";    // root of task ids
  std::vector<std::string> tasks;             // task ids; default: every folder under tasks_dir/cpu
  std::vector<std::string> variants = {"faster", "equal", "slower", "incorrect", "crashing", "not_compiling"};
  std::uint32_t exemplars = 2;                // exemplars drawn per task at the end
  double temperature = 1.0;                   // temperature of Equation 1 for those draws
  double timeout_s = 1800;                    // give up on the measurements after this long
};

status read(config::section s, run_options& o) {
  CRUCIBLE_TRY(s.read("evaluators", o.evaluators));
  CRUCIBLE_TRY(s.read("protocol", o.protocol));
  CRUCIBLE_TRY(s.read("tasks_dir", o.tasks_dir));
  CRUCIBLE_TRY(s.read("tasks", o.tasks));
  CRUCIBLE_TRY(s.read("variants", o.variants));
  CRUCIBLE_TRY(s.read("exemplars", o.exemplars));
  CRUCIBLE_TRY(s.read("temperature", o.temperature));
  CRUCIBLE_TRY(s.read("timeout_s", o.timeout_s));
  if (o.evaluators == 0) return make_error(errc::invalid_argument, "[run] evaluators must be at least 1");
  return s.finish();
}

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

struct run_args {
  std::string config, run_dir;
};

int run_main(const run_args& a) {
  auto file = load_config(a.config);
  if (!file) return 2;
  logging::log_options log;
  hub::hub_options hub_opts;
  run_options run;
  referee::referee_options referee_opts;
  if (auto s = config::read(file->get("log"), log); !s) return fail(s.error());
  if (auto s = referee::read(file->get("referee"), referee_opts); !s) return fail(s.error());
  if (auto s = config::read(file->get("hub"), hub_opts); !s) return fail(s.error());
  if (auto s = read(file->get("run"), run); !s) return fail(s.error());
  if (run.tasks.empty()) {
    std::error_code ec;
    for (auto& e : fs::directory_iterator(fs::path(run.tasks_dir) / "cpu", ec))
      if (fs::is_regular_file(e.path() / "task.py")) run.tasks.push_back("cpu/" + e.path().filename().string());
    std::sort(run.tasks.begin(), run.tasks.end());
    if (run.tasks.empty()) return fail("[run] no tasks: nothing under " + run.tasks_dir + "/cpu");
  }
  std::string dir = a.run_dir.empty() ? "runs/" + std::to_string(std::time(nullptr)) : a.run_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail("cannot create run folder '" + dir + "': " + ec.message());
  dir = fs::canonical(dir).string();
  log.file = dir + "/run.log";
  if (auto s = logging::init("run", logging::host_name(), log); !s) return fail(s.error());

  // The candidates: every variant file of every task, each a settle job.
  std::vector<node::job_spec> settle_jobs;
  for (auto& task : run.tasks)
    for (auto& v : run.variants) {
      fs::path file_path = fs::path(run.tasks_dir) / task / (v + ".py");
      if (!fs::is_regular_file(file_path)) continue;
      std::string id = task + "/" + v;
      settle_jobs.push_back({"settle/" + id, "settle", referee::candidate_envelope(id, task, slurp(file_path), "run")});
    }

  hub_opts.bind = "ipc://" + dir + "/hub";
  hub_opts.ledger_dir = dir + "/hub-ledger";
  if (hub_opts.bind.size() > 90) return fail("run folder path too long for an ipc socket: " + dir);
  auto kv = storage::open_rocksdb(hub_opts.ledger_dir);
  if (!kv) return fail(kv.error());
  auto hub_transport = bus::bind_hub_transport(hub_opts.bind);
  if (!hub_transport) return fail(hub_transport.error());

  install_signal_handlers();
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  std::shared_ptr<storage::kv_store> store(std::move(*kv));
  std::vector<caf::actor> actors{node::spawn_hub(sys, hub_opts, store,
                                                 std::shared_ptr<bus::transport>(std::move(*hub_transport)))};
  auto stop_all = [&] {
    caf::scoped_actor self{sys};
    for (auto& actor : actors) self->send_exit(actor, caf::exit_reason::user_shutdown);
  };
  // The referee, in the hub process as `crucible hub` runs it, on the hub's RocksDB.
  bus::peer_options referee_peer;
  referee_peer.name = "referee";
  referee_peer.node = logging::host_name();
  auto ref = referee::start_referee(sys, referee_opts, store, referee_peer, hub_opts.bind);
  if (!ref) {
    stop_all();
    return fail(ref.error());
  }
  spdlog::info("{}", ref->description);
  actors.push_back(ref->referee);
  actors.push_back(ref->worker);
  auto host = [&](const std::string& name, msg::Role role, std::uint32_t slots,
                  result<roles::service> svc) -> status {
    if (!svc) return svc.error();
    bus::peer_options peer;
    peer.name = name;
    peer.node = logging::host_name();
    peer.role = role;
    peer.slots = slots;
    peer.job_kinds = svc->job_kinds;
    auto t = bus::connect_peer_transport(hub_opts.bind, name);
    if (!t) return t.error();
    spdlog::info("{}: {}", name, svc->description);
    actors.push_back(svc->actor);
    actors.push_back(node::spawn_worker(sys, peer, svc->handler, std::shared_ptr<bus::transport>(std::move(*t))));
    return {};
  };
  for (std::uint32_t i = 0; i < run.evaluators; ++i) {
    roles::evaluator_service_options eo;
    eo.tasks = run.tasks_dir;
    eo.protocol = run.protocol;
    std::string name = "evaluator-" + std::to_string(i);
    if (auto s = host(name, msg::Role::Evaluator, 1, roles::spawn_evaluator_service(sys, eo, name)); !s) {
      stop_all();
      return fail(s.error());
    }
  }
  roles::exemplar_service_options xo;
  xo.db_dir = dir + "/exemplars";
  xo.temperature = run.temperature;
  if (auto s = host("exemplar", msg::Role::Exemplar, 16, roles::spawn_exemplar_service(sys, xo, "exemplar")); !s) {
    stop_all();
    return fail(s.error());
  }

  auto client_transport = bus::connect_peer_transport(hub_opts.bind, "run-client");
  if (!client_transport) {
    stop_all();
    return fail(client_transport.error());
  }
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
    sample_jobs.push_back({"sample/" + task, "exemplar.sample", query_envelope(task, run.exemplars, run.temperature, 1)});
  auto sampled = node::run_jobs(**client_transport, client, sample_jobs, jr);
  nlohmann::json draws = nlohmann::json::object();
  std::printf("\ncontrastive exemplars drawn per task (Equation 1, temperature %.2f):\n", run.temperature);
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

  stop_all();
  return settled.missing == 0 && settled.failed == 0 ? 0 : 1;
}
}  // namespace

command add_run_command(CLI::App& app) {
  auto a = std::make_shared<run_args>();
  auto* cmd = app.add_subcommand("run", "Run the job a config describes, every role in this process");
  cmd->add_option("config", a->config, "TOML config, e.g. configs/quickstart.toml")->required()->check(CLI::ExistingFile);
  cmd->add_option("--run-dir", a->run_dir, "run folder (default runs/TIMESTAMP)");
  return {cmd, [a] { return run_main(*a); }};
}

}  // namespace crucible::cli
