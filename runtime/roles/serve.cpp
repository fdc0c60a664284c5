#include "runtime/roles/serve.hpp"

#include <spdlog/spdlog.h>

#include "runtime/bus/zmq_transport.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/config/runtime_options.hpp"
#include "runtime/node/job_metrics.hpp"

namespace crucible::roles {

void add_role_options(CLI::App& cmd, role_args& a, const std::string& role) {
  cmd.add_option("--config", a.config, "TOML config ([log], [bus])");
  cmd.add_option("--connect", a.connect, "hub address, e.g. tcp://HOST:5555")->envname("CRUCIBLE_CONNECT");
  cmd.add_option("--name", a.name, "unique name on the bus (default " + role + "-HOST-PID)");
  cmd.add_option("--keys", a.keys, "CURVE key folder of this node (crucible keys generate; [bus] keys); none: plain")->envname("CRUCIBLE_KEYS");
  cmd.add_option("--log-level", a.log_level, "trace, debug, info, warn, error");
  cli::add_metrics_option(cmd, a.metrics);
}

int serve(const std::string& role, msg::Role wire_role, std::uint32_t slots, const role_args& a,
          const spawn_service& spawn) {
  auto file = cli::load_config(a.config);
  if (!file) return 2;
  logging::log_options log;
  bus::peer_options peer;
  std::string connect = "tcp://127.0.0.1:5555";
  if (auto s = config::read(file->get("log"), log); !s) return cli::fail(s.error());
  if (auto s = config::read(file->get("bus"), peer, connect); !s) return cli::fail(s.error());
  if (!a.connect.empty()) connect = a.connect;
  if (!a.log_level.empty()) log.level = a.log_level;
  if (!a.name.empty()) peer.name = a.name;
  if (!a.keys.empty()) peer.keys = a.keys;
  if (peer.name.empty()) peer.name = cli::default_name(role);
  peer.node = logging::host_name();
  peer.role = wire_role;
  peer.slots = slots;
  if (auto s = logging::init(role, peer.node, log); !s) return cli::fail(s.error());
  auto metrics = cli::open_metrics(*file, a.metrics);
  if (!metrics) return cli::fail(metrics.error());
  auto registry = *metrics ? (*metrics)->registry() : nullptr;
  auto transport = bus::connect_peer_transport(connect, peer.name, {.keys = peer.keys});
  if (!transport) return cli::fail(transport.error());

  cli::install_signal_handlers();
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  auto svc = spawn(sys, peer.name, registry);
  if (!svc) return cli::fail(svc.error());
  peer.job_kinds = svc->job_kinds;
  peer.required = svc->required;
  peer.deadline_ms = svc->deadline_ms;
  spdlog::info("{} {}: {}, serving {}", role, peer.name, svc->description, connect);
  auto worker = node::spawn_worker(sys, peer, node::counting_jobs(svc->handler, registry, peer.name),
                                   std::shared_ptr<bus::transport>(std::move(*transport)), svc->events);
  std::vector<caf::actor> actors{worker, svc->actor};
  actors.insert(actors.end(), svc->companions.begin(), svc->companions.end());
  return cli::wait_for_shutdown(sys, actors);
}

}  // namespace crucible::roles
