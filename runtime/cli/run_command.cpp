// `crucible run CONFIG`: starts every role the config names in this process
// (the embedded default: one machine, ipc transport, one run folder) and runs
// the job. Today that is the hub and its workers with a batch of jobs through
// the real bus; the RL loop (issue 8) grows here.
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "runtime/bus/zmq_transport.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/config/runtime_options.hpp"
#include "runtime/node/hub_actor.hpp"
#include "runtime/node/job_runner.hpp"
#include "runtime/node/worker_actor.hpp"
#include "storage/rocksdb_store.hpp"

namespace crucible::cli {

namespace {
namespace fs = std::filesystem;

// [run]: what `crucible run` starts.
struct run_options {
  std::uint32_t workers = 2;         // echo workers started in this process
  std::uint32_t slots = 1;           // slots per worker
  std::uint64_t smoke_jobs = 2000;   // jobs pushed through the bus
  std::uint64_t payload_bytes = 1024;
};

status read(config::section s, run_options& o) {
  CRUCIBLE_TRY(s.read("workers", o.workers));
  CRUCIBLE_TRY(s.read("slots", o.slots));
  CRUCIBLE_TRY(s.read("smoke_jobs", o.smoke_jobs));
  CRUCIBLE_TRY(s.read("payload_bytes", o.payload_bytes));
  if (o.workers == 0) return make_error(errc::invalid_argument, "[run] workers must be at least 1");
  return s.finish();
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
  if (auto s = config::read(file->get("log"), log); !s) return fail(s.error());
  if (auto s = config::read(file->get("hub"), hub_opts); !s) return fail(s.error());
  if (auto s = read(file->get("run"), run); !s) return fail(s.error());
  std::string dir = a.run_dir.empty() ? "runs/" + std::to_string(std::time(nullptr)) : a.run_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail("cannot create run folder '" + dir + "': " + ec.message());
  dir = fs::canonical(dir).string();
  log.file = dir + "/run.log";
  if (auto s = logging::init("run", logging::host_name(), log); !s) return fail(s.error());

  // One process, real bus: the hub binds an ipc socket in the run folder.
  hub_opts.bind = "ipc://" + dir + "/hub";
  hub_opts.ledger_dir = dir + "/db";
  if (hub_opts.bind.size() > 90) return fail("run folder path too long for an ipc socket: " + dir);
  auto kv = storage::open_rocksdb(hub_opts.ledger_dir);
  if (!kv) return fail(kv.error());
  auto hub_transport = bus::bind_hub_transport(hub_opts.bind);
  if (!hub_transport) return fail(hub_transport.error());

  install_signal_handlers();
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  auto hub = node::spawn_hub(sys, hub_opts, std::shared_ptr<storage::kv_store>(std::move(*kv)),
                             std::shared_ptr<bus::transport>(std::move(*hub_transport)));

  std::vector<caf::actor> actors{hub};
  for (std::uint32_t i = 0; i < run.workers; ++i) {
    bus::peer_options w;
    w.name = "worker-" + std::to_string(i);
    w.node = logging::host_name();
    w.slots = run.slots;
    w.job_kinds = {"echo"};
    auto t = bus::connect_peer_transport(hub_opts.bind, w.name);
    if (!t) return fail(t.error());
    actors.push_back(node::spawn_worker(sys, w, node::make_echo_handler(), std::shared_ptr<bus::transport>(std::move(*t))));
  }

  auto client_transport = bus::connect_peer_transport(hub_opts.bind, "run-client");
  if (!client_transport) return fail(client_transport.error());
  std::vector<node::job_spec> jobs;
  bus::bytes payload(run.payload_bytes, 0x42);
  for (std::uint64_t i = 0; i < run.smoke_jobs; ++i) jobs.push_back({"smoke-" + std::to_string(i), "echo", payload});
  spdlog::info("run folder {}: hub and {} workers up; pushing {} jobs through the bus", dir, run.workers, jobs.size());
  node::job_run_options jr;
  jr.cancelled = shutdown_requested;
  jr.timeout = std::chrono::seconds(300);
  auto rep = node::run_jobs(**client_transport, {.name = "run-client", .node = logging::host_name()}, jobs, jr);

  nlohmann::json summary = {{"jobs", jobs.size()},        {"completed", rep.completed}, {"failed", rep.failed},
                            {"missing", rep.missing},     {"jobs_per_s", rep.jobs_per_s},
                            {"p50_us", rep.p50_us},       {"p99_us", rep.p99_us},       {"run_dir", dir}};
  std::ofstream(dir + "/summary.json") << summary.dump(2) << "\n";
  std::printf("crucible run: %llu/%zu jobs completed through the hub (%llu failed) in %.2f s: %.0f jobs/s, "
              "p50 %.0f us, p99 %.0f us\nrun folder: %s\n",
              static_cast<unsigned long long>(rep.completed), jobs.size(),
              static_cast<unsigned long long>(rep.failed), rep.elapsed_s, rep.jobs_per_s, rep.p50_us, rep.p99_us,
              dir.c_str());

  caf::scoped_actor self{sys};
  for (auto& actor : actors) self->send_exit(actor, caf::exit_reason::user_shutdown);
  return rep.completed == jobs.size() ? 0 : 1;
}
}  // namespace

command add_run_command(CLI::App& app) {
  auto a = std::make_shared<run_args>();
  auto* cmd = app.add_subcommand("run", "Run the job a config describes, every role in this process");
  cmd->add_option("config", a->config, "TOML config, e.g. configs/quickstart.toml")->required()->check(CLI::ExistingFile);
  cmd->add_option("--run-dir", a->run_dir, "run folder (default runs/TIMESTAMP)");
  return {cmd, [a] { return run_main(*a); }};
}

command add_pending_role(CLI::App& app, const std::string& role, const std::string& description,
                         const std::string& issue) {
  auto* cmd = app.add_subcommand(role, description + " (not built yet: " + issue + ")");
  cmd->allow_extras();
  return {cmd, [role, issue] { return fail("the " + role + " role is not built yet; it arrives with " + issue); }};
}

}  // namespace crucible::cli
