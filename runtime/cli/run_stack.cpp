#include "runtime/cli/run_stack.hpp"

#include <spdlog/spdlog.h>

#include "actors/detector/detector_role.hpp"
#include "actors/referee/referee_host.hpp"
#include "runtime/base/compute_tuning.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/config/runtime_options.hpp"
#include "runtime/log/log.hpp"
#include "runtime/node/hub_actor.hpp"
#include "runtime/node/job_metrics.hpp"
#include "storage/rocksdb_store.hpp"

namespace crucible::cli {

result<std::unique_ptr<run_stack>> run_stack::start(caf::actor_system& sys, const config::file& file,
                                                    const run_options& run, const std::string& dir,
                                                    metrics::registry_ptr metrics) {
  hub::hub_options hub_opts;
  referee::referee_options referee_opts;
  detector::detector_options detector_opts;
  CRUCIBLE_TRY(config::read(file.get("hub"), hub_opts));
  CRUCIBLE_TRY(referee::read(file.get("referee"), referee_opts));
  CRUCIBLE_TRY(detector::read(file.get("detector"), detector_opts));
  std::unique_ptr<run_stack> stack(new run_stack(sys));
  stack->metrics_ = std::move(metrics);
  std::string unused_connect;
  CRUCIBLE_TRY(config::read(file.get("bus"), stack->bus_, unused_connect));
  hub_opts.bind = "ipc://" + dir + "/hub";
  hub_opts.ledger_dir = dir + "/hub-ledger";
  if (hub_opts.bind.size() > 90) return make_error(errc::invalid_argument, "run folder path too long for an ipc socket: " + dir);

  stack->address_ = hub_opts.bind;
  auto kv = storage::open_rocksdb(hub_opts.ledger_dir);
  if (!kv) return kv.error();
  stack->store_ = std::move(*kv);
  // ipc in the run folder: plain unless [bus] keys names a key folder.
  auto hub_transport = bus::bind_hub_transport(hub_opts.bind, {.keys = stack->bus_.keys});
  if (!hub_transport) return hub_transport.error();
  stack->board_ = run.board;
  stack->adopt(node::spawn_hub(sys, hub_opts, stack->store_, std::shared_ptr<bus::transport>(std::move(*hub_transport)),
                               stack->metrics_, stack->board_));

  // The referee, in the hub process as `crucible hub` runs it, on the hub's RocksDB.
  bus::peer_options referee_peer = stack->bus_;
  referee_peer.name = "referee";
  referee_peer.node = logging::host_name();
  auto ref = referee::start_referee(sys, referee_opts, stack->store_, referee_peer, hub_opts.bind, stack->metrics_);
  if (!ref) return ref.error();
  spdlog::info("{}", ref->description);
  stack->adopt(ref->referee);
  stack->adopt(ref->worker);

  std::vector<std::string> devices = run.devices;
  if (devices.empty()) devices.assign(run.evaluators, "cpu");
  // Each CPU evaluator's workers get a core of their own, from the last one
  // down (one evaluator: the last core, as `crucible evaluator` picks), so
  // that N evaluators measure N candidates at once instead of sharing one.
  const std::vector<int> cores = allowed_cores();
  for (std::size_t i = 0; i < devices.size(); ++i) {
    roles::evaluator_service_options eo;
    eo.device = devices[i];
    if (eo.device == "cpu" && !cores.empty()) eo.cores = {cores[cores.size() - 1 - i % cores.size()]};
    eo.tasks = run.tasks_dir;
    eo.protocol = run.protocol;
    eo.strict = run.strict;
    eo.tolerances = run.tolerances;
    eo.warm_spares = run.warm_spares;
    eo.metrics = stack->metrics_;
    const std::string name = "evaluator-" + std::to_string(i);
    CRUCIBLE_TRY(stack->host(name, msg::Role::Evaluator, roles::evaluator_slots(eo),
                             roles::spawn_evaluator_service(sys, eo, name)));
  }
  roles::exemplar_service_options xo;
  xo.db_dir = dir + "/exemplars";
  xo.temperature = run.exemplar_temperature;
  xo.seed_files = run.exemplar_seed;
  xo.seed_settled = run.exemplar_settled;
  xo.seed_tasks_dir = run.tasks_dir;
  CRUCIBLE_TRY(stack->host("exemplar", msg::Role::Exemplar, 16, roles::spawn_exemplar_service(sys, xo, "exemplar")));
  for (const auto& kind : run.detectors) {
    auto d = detector_opts;
    d.kind = detector::detector_kind::static_rules;
    if (d.name.empty()) d.name = kind;
    CRUCIBLE_TRY(stack->host("detector-" + d.name, msg::Role::Detector, d.slots, detector::spawn_detector_service(sys, d)));
  }
  return stack;
}

status run_stack::host(const std::string& name, msg::Role role, std::uint32_t slots, result<roles::service> svc) {
  if (!svc) return svc.error();
  bus::peer_options peer = bus_;
  peer.name = name;
  peer.node = logging::host_name();
  peer.role = role;
  peer.slots = slots;
  peer.job_kinds = svc->job_kinds;
  peer.required = svc->required;
  peer.deadline_ms = svc->deadline_ms;
  auto t = connect(name);
  if (!t) return t.error();
  spdlog::info("{}: {}", name, svc->description);
  adopt(svc->actor);
  for (auto& c : svc->companions) adopt(c);
  adopt(node::spawn_worker(sys_, peer, node::counting_jobs(svc->handler, metrics_, name), std::move(*t), svc->events));
  return status::success();
}

result<std::shared_ptr<bus::transport>> run_stack::connect(const std::string& name) const {
  auto t = bus::connect_peer_transport(address_, name, {.keys = bus_.keys});
  if (!t) return t.error();
  return std::shared_ptr<bus::transport>(std::move(*t));
}

void run_stack::stop() {
  caf::scoped_actor self{sys_};
  for (auto& actor : actors_) self->send_exit(actor, caf::exit_reason::user_shutdown);
  actors_.clear();
}

run_stack::~run_stack() { stop(); }

}  // namespace crucible::cli
