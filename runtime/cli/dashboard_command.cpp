// `crucible dashboard --connect HUB --dashboard HOST:PORT`: the live
// dashboard of a hub started without one, in a process of its own. It joins
// the hub as a client, hears its events (PeerEvent, Settlement,
// ExemplarBuckets) and serves the same page from them (docs/dashboard.md):
// the fleet as the registry announces it, the settlements with the reward
// curve, the exemplar buckets per task. The queues, the jobs each peer holds
// and the throughput are the hub's own state, which no event carries: a hub
// started with --dashboard shows them.
#include <spdlog/spdlog.h>

#include "runtime/bus/zmq_transport.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/config/runtime_options.hpp"
#include "runtime/node/caf_types.hpp"
#include "runtime/node/client_actor.hpp"
#include "runtime/node/hub_board.hpp"

namespace crucible::cli {

namespace {

struct dashboard_args {
  std::string config, connect, name, keys, log_level, dashboard;
};

int run_dashboard(const dashboard_args& a) {
  auto file = load_config(a.config);
  if (!file) return 2;
  logging::log_options log;
  bus::peer_options peer;
  std::string connect = "tcp://127.0.0.1:5555";
  if (auto s = config::read(file->get("log"), log); !s) return fail(s.error());
  if (auto s = config::read(file->get("bus"), peer, connect); !s) return fail(s.error());
  if (!a.connect.empty()) connect = a.connect;
  if (!a.log_level.empty()) log.level = a.log_level;
  if (!a.name.empty()) peer.name = a.name;
  if (!a.keys.empty()) peer.keys = a.keys;
  if (peer.name.empty()) peer.name = default_name("dashboard");
  peer.node = logging::host_name();
  peer.role = msg::Role::Client;
  if (auto s = logging::init("dashboard", peer.node, log); !s) return fail(s.error());
  auto dashboard = open_dashboard(*file, a.dashboard);
  if (!dashboard) return fail(dashboard.error());
  if (!*dashboard) return fail("crucible dashboard needs --dashboard HOST:PORT or [dashboard] listen");
  auto transport = bus::connect_peer_transport(connect, peer.name, {.keys = peer.keys});
  if (!transport) return fail(transport.error());

  install_signal_handlers();
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  node::client_actor_options co;
  co.peer = peer;
  co.subscribe = {"PeerEvent", "Settlement", "ExemplarBuckets"};
  co.on_event = [board = (*dashboard)->board()](const std::string& topic, const bus::bytes& data) {
    node::show_event({bus::channel::event, {}, topic, data}, *board, messages::default_max_message_bytes,
                     dashboard::clock::now());
  };
  auto client = node::spawn_client(sys, co, std::shared_ptr<bus::transport>(std::move(*transport)));
  spdlog::info("dashboard {} of the hub at {}", peer.name, connect);
  return wait_for_shutdown(sys, {client.actor()});
}

}  // namespace

command add_dashboard_command(CLI::App& app) {
  auto a = std::make_shared<dashboard_args>();
  auto* cmd = app.add_subcommand("dashboard", "Serve the live dashboard of a hub started without one, from its events "
                                              "(fleet, settlements, exemplar buckets; docs/dashboard.md)");
  cmd->add_option("--config", a->config, "TOML config ([log], [bus], [dashboard])");
  cmd->add_option("--connect", a->connect, "hub address, e.g. tcp://HOST:5555")->envname("CRUCIBLE_CONNECT");
  cmd->add_option("--name", a->name, "unique name on the bus (default dashboard-HOST-PID)");
  cmd->add_option("--keys", a->keys, "CURVE key folder of this node ([bus] keys); none: plain")->envname("CRUCIBLE_KEYS");
  cmd->add_option("--log-level", a->log_level, "trace, debug, info, warn, error");
  add_dashboard_option(*cmd, a->dashboard);
  return {cmd, [a] { return run_dashboard(*a); }};
}

}  // namespace crucible::cli
