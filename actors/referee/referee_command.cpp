#include "actors/referee/referee_command.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "actors/referee/referee_host.hpp"
#include "actors/referee/referee_wire.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/node/job_runner.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/config/runtime_options.hpp"
#include "storage/rocksdb_store.hpp"

namespace crucible::referee {

namespace {
struct referee_args {
  std::string config, connect, name, ledger, log_level, keys, metrics;
};

int run_referee(const referee_args& a) {
  auto file = cli::load_config(a.config);
  if (!file) return 2;
  logging::log_options log;
  bus::peer_options peer;
  referee_options options;
  std::string connect = "tcp://127.0.0.1:5555";
  if (auto s = config::read(file->get("log"), log); !s) return cli::fail(s.error());
  if (auto s = config::read(file->get("bus"), peer, connect); !s) return cli::fail(s.error());
  if (auto s = read(file->get("referee"), options); !s) return cli::fail(s.error());
  if (!a.connect.empty()) connect = a.connect;
  if (!a.name.empty()) peer.name = a.name;
  if (!a.ledger.empty()) options.ledger_dir = a.ledger;
  if (!a.keys.empty()) peer.keys = a.keys;
  if (!a.log_level.empty()) log.level = a.log_level;
  if (peer.name.empty()) peer.name = cli::default_name("referee");
  peer.node = logging::host_name();
  if (auto s = logging::init("referee", peer.node, log); !s) return cli::fail(s.error());
  auto metrics = cli::open_metrics(*file, a.metrics);
  if (!metrics) return cli::fail(metrics.error());
  auto kv = storage::open_rocksdb(options.ledger_dir);
  if (!kv) return cli::fail(kv.error());

  cli::install_signal_handlers();
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  auto svc = start_referee(sys, options, std::shared_ptr<storage::kv_store>(std::move(*kv)), peer, connect,
                           *metrics ? (*metrics)->registry() : nullptr);
  if (!svc) return cli::fail(svc.error());
  spdlog::info("{}, ledger {}, serving {}", svc->description, options.ledger_dir, connect);
  return cli::wait_for_shutdown(sys, {svc->referee, svc->worker});
}
struct settle_args {
  std::string connect = "tcp://127.0.0.1:5555", name, task, candidate, id, keys;
  double timeout_s = 1800;
};

int run_settle(const settle_args& a) {
  logging::log_options log;
  log.level = "warn";
  bus::peer_options peer;
  peer.name = a.name.empty() ? cli::default_name("settle") : a.name;
  peer.node = logging::host_name();
  if (auto s = logging::init("settle", peer.node, log); !s) return cli::fail(s.error());
  std::ifstream in(a.candidate);
  if (!in) return cli::fail("--candidate '" + a.candidate + "' cannot be read");
  std::stringstream code;
  code << in.rdbuf();
  std::string id = a.id.empty() ? peer.name + "/" + a.task : a.id;
  auto transport = bus::connect_peer_transport(a.connect, peer.name, {.keys = a.keys});
  if (!transport) return cli::fail(transport.error());
  cli::install_signal_handlers();
  node::job_run_options run;
  run.timeout = std::chrono::duration<double>(a.timeout_s);
  run.cancelled = cli::shutdown_requested;
  run.keep_results = true;
  auto report = node::run_jobs(**transport, peer,
                               {{"settle/" + id, "settle", candidate_envelope(id, a.task, code.str(), peer.name)}}, run);
  if (report.results.empty()) return cli::fail("no settlement for " + id + " within " + fmt::format("{:.0f}", a.timeout_s) + " s");
  auto& r = report.results.front();
  auto* s = payload_of<msg::Settlement>(r.payload);
  if (r.status != msg::JobStatus::Ok || !s) return cli::fail("settle job " + r.id + " failed: " + r.error);
  nlohmann::json j = {{"candidate", std::string(messages::str(s->candidate_id()))},
                      {"task", std::string(messages::str(s->task_id()))},
                      {"status", msg::EnumNameSettlementStatus(s->status())},
                      {"reward", s->reward()},
                      {"speedup_raw", s->speedup_raw()},
                      {"verified", s->verified()},
                      {"reason", std::string(messages::str(s->reason()))},
                      {"settled_ns", s->settled_ns()}};
  std::printf("%s\n", j.dump().c_str());
  return 0;
}
}  // namespace

cli::command add_settle_command(CLI::App& app) {
  auto a = std::make_shared<settle_args>();
  auto* cmd = app.add_subcommand("settle", "Submit one candidate to the hub's referee and print its settlement "
                                           "(JSON) once it is settled");
  cmd->add_option("--connect", a->connect, "hub address")->envname("CRUCIBLE_CONNECT");
  cmd->add_option("--task", a->task, "task id, e.g. cpu/gelu_tanh")->required();
  cmd->add_option("--candidate", a->candidate, "the candidate's source file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--id", a->id, "candidate id (default NAME/TASK), unique for the run: the hub answers a settle job id it has completed and forgotten with no result");
  cmd->add_option("--name", a->name, "unique client name (default settle-HOST-PID)");
  cmd->add_option("--keys", a->keys, "CURVE key folder of this node (crucible keys generate; [bus] keys); none: plain")->envname("CRUCIBLE_KEYS");
  cmd->add_option("--timeout-s", a->timeout_s, "give up after this many seconds (default 1800)");
  return {cmd, [a] { return run_settle(*a); }};
}

cli::command add_referee_command(CLI::App& app) {
  auto a = std::make_shared<referee_args>();
  auto* cmd = app.add_subcommand("referee", "Run a referee that settles candidates for a hub (settle jobs): "
                                            "measure, verify on a second device, detectors, one settlement each");
  cmd->add_option("--config", a->config, "TOML config ([log], [bus], [referee]; docs/configuration.md)");
  cmd->add_option("--connect", a->connect, "hub address, e.g. tcp://HOST:5555")->envname("CRUCIBLE_CONNECT");
  cmd->add_option("--name", a->name, "unique name on the bus (default referee-HOST-PID)");
  cmd->add_option("--ledger", a->ledger, "directory of its RocksDB ledger (default referee-ledger)");
  cmd->add_option("--keys", a->keys, "CURVE key folder of this node (crucible keys generate; [bus] keys); none: plain")->envname("CRUCIBLE_KEYS");
  cmd->add_option("--log-level", a->log_level, "trace, debug, info, warn, error");
  cli::add_metrics_option(*cmd, a->metrics);
  return {cmd, [a] { return run_referee(*a); }};
}

}  // namespace crucible::referee
