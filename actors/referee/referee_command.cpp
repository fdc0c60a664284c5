#include "actors/referee/referee_command.hpp"

#include <spdlog/spdlog.h>

#include "actors/referee/referee_host.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/config/runtime_options.hpp"
#include "storage/rocksdb_store.hpp"

namespace crucible::referee {

namespace {
struct referee_args {
  std::string config, connect, name, ledger, log_level;
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
  if (!a.log_level.empty()) log.level = a.log_level;
  if (peer.name.empty()) peer.name = cli::default_name("referee");
  peer.node = logging::host_name();
  if (auto s = logging::init("referee", peer.node, log); !s) return cli::fail(s.error());
  auto kv = storage::open_rocksdb(options.ledger_dir);
  if (!kv) return cli::fail(kv.error());

  cli::install_signal_handlers();
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  auto svc = start_referee(sys, options, std::shared_ptr<storage::kv_store>(std::move(*kv)), peer, connect);
  if (!svc) return cli::fail(svc.error());
  spdlog::info("{}, ledger {}, serving {}", svc->description, options.ledger_dir, connect);
  return cli::wait_for_shutdown(sys, {svc->referee, svc->worker});
}
}  // namespace

cli::command add_referee_command(CLI::App& app) {
  auto a = std::make_shared<referee_args>();
  auto* cmd = app.add_subcommand("referee", "Run a referee that settles candidates for a hub (settle jobs): "
                                            "measure, verify on a second device, detectors, one settlement each");
  cmd->add_option("--config", a->config, "TOML config ([log], [bus], [referee]; docs/configuration.md)");
  cmd->add_option("--connect", a->connect, "hub address, e.g. tcp://HOST:5555")->envname("CRUCIBLE_CONNECT");
  cmd->add_option("--name", a->name, "unique name on the bus (default referee-HOST-PID)");
  cmd->add_option("--ledger", a->ledger, "directory of its RocksDB ledger (default referee-ledger)");
  cmd->add_option("--log-level", a->log_level, "trace, debug, info, warn, error");
  return {cmd, [a] { return run_referee(*a); }};
}

}  // namespace crucible::referee
