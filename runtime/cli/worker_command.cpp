// `crucible worker`: a generic job worker (echo, null and sleep jobs) that
// joins a hub; the peer of the bus integration tests and benchmarks.
#include <spdlog/spdlog.h>

#include "runtime/bus/zmq_transport.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/config/runtime_options.hpp"
#include "runtime/node/job_metrics.hpp"
#include "runtime/node/worker_actor.hpp"

namespace crucible::cli {

namespace {
struct worker_args {
  std::string config, connect, name, log_level, keys, metrics;
  std::vector<std::string> kinds;
  std::uint32_t slots = 0;
};

int run_worker(const worker_args& a) {
  auto file = load_config(a.config);
  if (!file) return 2;
  logging::log_options log;
  bus::peer_options options;
  options.job_kinds = {"echo", "null", "sleep"};
  std::string connect = "tcp://127.0.0.1:5555";
  if (auto s = config::read(file->get("log"), log); !s) return fail(s.error());
  if (auto s = config::read(file->get("bus"), options, connect); !s) return fail(s.error());
  if (auto s = config::read_worker(file->get("worker"), options); !s) return fail(s.error());
  if (!a.connect.empty()) connect = a.connect;
  if (!a.name.empty()) options.name = a.name;
  if (!a.keys.empty()) options.keys = a.keys;
  if (!a.kinds.empty()) options.job_kinds = a.kinds;
  if (a.slots) options.slots = a.slots;
  if (!a.log_level.empty()) log.level = a.log_level;
  if (options.name.empty()) options.name = default_name("worker");
  options.node = logging::host_name();
  options.role = msg::Role::Worker;
  if (auto s = logging::init("worker", options.node, log); !s) return fail(s.error());
  auto metrics = open_metrics(*file, a.metrics);
  if (!metrics) return fail(metrics.error());
  auto registry = *metrics ? (*metrics)->registry() : nullptr;

  auto transport = bus::connect_peer_transport(connect, options.name, {.keys = options.keys});
  if (!transport) return fail(transport.error());
  spdlog::info("worker {} joining {} (kinds {}, {} slots)", options.name, connect, fmt::join(options.job_kinds, ","),
               options.slots);
  install_signal_handlers();
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  auto worker = node::spawn_worker(sys, options, node::counting_jobs(node::make_echo_handler(), registry, options.name),
                                   std::shared_ptr<bus::transport>(std::move(*transport)));
  return wait_for_shutdown(sys, {worker});
}
}  // namespace

command add_worker_command(CLI::App& app) {
  auto a = std::make_shared<worker_args>();
  auto* cmd = app.add_subcommand("worker", "Run a generic job worker (echo, null and sleep jobs) for tests and "
                                           "benchmarks of the bus");
  cmd->add_option("--config", a->config, "TOML config ([log], [bus], [worker])");
  cmd->add_option("--connect", a->connect, "hub address, e.g. tcp://HOST:5555")->envname("CRUCIBLE_CONNECT");
  cmd->add_option("--name", a->name, "unique name on the bus (default worker-HOST-PID)");
  cmd->add_option("--keys", a->keys, "CURVE key folder of this node (crucible keys generate; [bus] keys); none: plain")->envname("CRUCIBLE_KEYS");
  cmd->add_option("--kinds", a->kinds, "job kinds served (default echo null sleep)")->delimiter(',');
  cmd->add_option("--slots", a->slots, "jobs run at once (default 1)");
  cmd->add_option("--log-level", a->log_level, "trace, debug, info, warn, error");
  add_metrics_option(*cmd, a->metrics);
  return {cmd, [a] { return run_worker(*a); }};
}

}  // namespace crucible::cli
