// `crucible hub`: the hub process (registry, dispatch, events, ledger).
#include <spdlog/spdlog.h>

#include "runtime/bus/zmq_transport.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/config/runtime_options.hpp"
#include "runtime/node/hub_actor.hpp"
#include "storage/rocksdb_store.hpp"
#ifdef CRUCIBLE_HAVE_REFEREE
#include "actors/referee/referee_host.hpp"
#endif

namespace crucible::cli {

namespace {
struct hub_args {
  std::string config, bind, ledger, log_level, keys, metrics, dashboard;
};

int run_hub(const hub_args& a) {
  auto file = load_config(a.config);
  if (!file) return 2;
  logging::log_options log;
  hub::hub_options options;
  if (auto s = config::read(file->get("log"), log); !s) return fail(s.error());
  if (auto s = config::read(file->get("hub"), options); !s) return fail(s.error());
  // [bus]: the key folder here; the in-process referee's peer settings too.
  bus::peer_options bus_opts;
  std::string unused_connect;
  if (auto s = config::read(file->get("bus"), bus_opts, unused_connect); !s) return fail(s.error());
  if (!a.keys.empty()) bus_opts.keys = a.keys;
#ifdef CRUCIBLE_HAVE_REFEREE
  // The referee runs in the hub process unless [referee] enabled = false; it
  // joins the hub like any peer ([bus] settings) and keeps its ledger in the
  // hub's RocksDB (family "candidates").
  referee::referee_options referee_opts;
  bus::peer_options referee_peer = bus_opts;
  if (auto s = referee::read(file->get("referee"), referee_opts); !s) return fail(s.error());
#endif
  if (!a.bind.empty()) options.bind = a.bind;
  if (!a.ledger.empty()) options.ledger_dir = a.ledger;
  if (!a.log_level.empty()) log.level = a.log_level;
  if (auto s = logging::init("hub", logging::host_name(), log); !s) return fail(s.error());
  auto metrics = open_metrics(*file, a.metrics);
  if (!metrics) return fail(metrics.error());
  auto registry = *metrics ? (*metrics)->registry() : nullptr;
  auto dashboard = open_dashboard(*file, a.dashboard);
  if (!dashboard) return fail(dashboard.error());
  auto board = *dashboard ? (*dashboard)->board() : nullptr;

  auto kv = storage::open_rocksdb(options.ledger_dir);
  if (!kv) return fail(kv.error());
  auto transport = bus::bind_hub_transport(options.bind, {.keys = bus_opts.keys});
  if (!transport) return fail(transport.error());
  spdlog::info("hub listening on {} (ledger {}, heartbeat {} ms, dead after {} ms, {})", options.bind,
               options.ledger_dir, options.heartbeat.count(), options.dead_after.count(),
               bus_opts.keys.empty() ? "no CURVE: any process that reaches the port may join"
                                     : "CURVE, peers of " + bus_opts.keys + "/authorized_keys only");

  install_signal_handlers();
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  std::shared_ptr<storage::kv_store> store(std::move(*kv));
  auto hub = node::spawn_hub(sys, options, store, std::shared_ptr<bus::transport>(std::move(*transport)), registry,
                             board);
  std::vector<caf::actor> actors{hub};
#ifdef CRUCIBLE_HAVE_REFEREE
  if (referee_opts.enabled) {
    referee_peer.name = "referee";
    referee_peer.node = logging::host_name();
    auto svc = referee::start_referee(sys, referee_opts, store, referee_peer, referee::local_address(options.bind),
                                      registry);
    if (!svc) {
      caf::anon_send_exit(hub, caf::exit_reason::user_shutdown);
      return fail(svc.error());
    }
    spdlog::info("{} in the hub process", svc->description);
    actors.push_back(svc->referee);
    actors.push_back(svc->worker);
  }
#endif
  return wait_for_shutdown(sys, actors);
}
}  // namespace

command add_hub_command(CLI::App& app) {
  auto a = std::make_shared<hub_args>();
  auto* cmd = app.add_subcommand("hub", "Run the hub: service registry, credit-based job dispatch, event fan-out, "
                                        "liveness and the durable job ledger");
  cmd->add_option("--config", a->config, "TOML config ([log], [hub]; docs/configuration.md)");
  cmd->add_option("--bind", a->bind, "address to bind: tcp://HOST:PORT (uses PORT..PORT+2), ipc://PATH")
      ->envname("CRUCIBLE_HUB_BIND");
  cmd->add_option("--ledger", a->ledger, "directory of the job ledger (RocksDB)");
  cmd->add_option("--keys", a->keys, "CURVE key folder of the hub (crucible keys generate; its authorized_keys lists the peers it accepts; [bus] keys); none: plain")->envname("CRUCIBLE_KEYS");
  cmd->add_option("--log-level", a->log_level, "trace, debug, info, warn, error");
  add_metrics_option(*cmd, a->metrics);
  add_dashboard_option(*cmd, a->dashboard);
  return {cmd, [a] { return run_hub(*a); }};
}

}  // namespace crucible::cli
