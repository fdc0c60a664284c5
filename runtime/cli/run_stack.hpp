// The roles every `crucible run` job hosts in its own process, joined over
// the real bus (ipc in the run folder): the hub with its durable ledger and
// the referee on the hub's RocksDB, CPU evaluators, the exemplar store and
// the in-process detectors. Used by both jobs (run_variants.cpp,
// run_loop.cpp); the loop adds the learner and the rollouts through host().
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "messages/common_generated.h"
#include "runtime/base/result.hpp"
#include "runtime/bus/peer_options.hpp"
#include "runtime/cli/run_options.hpp"
#include "runtime/metrics/registry.hpp"
#include "runtime/config/config_file.hpp"
#include "runtime/roles/roles.hpp"
#include "storage/kv_store.hpp"

namespace crucible::cli {

class run_stack {
 public:
  // Starts the hub at ipc://DIR/hub on DIR/hub-ledger (an existing ledger
  // is resumed; [hub]; every peer takes [bus]'s liveness settings), the referee ([referee]), `run.evaluators` evaluators, the
  // exemplar store in DIR/exemplars and run.detectors ([detector]).
  // Errors: a section that does not read, a store or socket that cannot open.
  // metrics: where every role's families go (null: off). run.board: the
  // dashboard the hub and the exemplar store show on (null: none).
  static result<std::unique_ptr<run_stack>> start(caf::actor_system& sys, const config::file& file,
                                                  const run_options& run, const std::string& dir,
                                                  metrics::registry_ptr metrics);
  ~run_stack();

  // Runs a service as a worker named `name` on the hub (its jobs counted
  // in the metrics, job_metrics.hpp).
  status host(const std::string& name, msg::Role role, std::uint32_t slots, result<roles::service> svc);
  // A client connection to the hub for `name`.
  result<std::shared_ptr<bus::transport>> connect(const std::string& name) const;
  // Keeps `actor` to be stopped with the rest.
  void adopt(caf::actor actor) { actors_.push_back(std::move(actor)); }

  const std::string& address() const { return address_; }
  // [bus]: the liveness settings of every peer in the process.
  const bus::peer_options& bus_settings() const { return bus_; }
  // The hub's RocksDB, which the referee's candidate ledger lives in.
  const std::shared_ptr<storage::kv_store>& store() const { return store_; }
  // The registry the roles of the run register on (null: metrics off).
  const metrics::registry_ptr& metrics() const { return metrics_; }
  // Asks every actor started here to exit (also done by the destructor).
  void stop();

 private:
  run_stack(caf::actor_system& sys) : sys_(sys) {}
  caf::actor_system& sys_;
  std::string address_;
  bus::peer_options bus_;
  std::shared_ptr<storage::kv_store> store_;
  metrics::registry_ptr metrics_;
  std::vector<caf::actor> actors_;
  std::shared_ptr<dashboard::board> board_;  // run.board
};

}  // namespace crucible::cli
