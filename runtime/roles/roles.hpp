// The roles that take work from the hub as jobs. Each role is its own actor
// (the exemplar actor, the evaluator actor) behind a job handler that a
// worker actor (runtime/node/worker_actor.hpp) feeds with the role's job
// kinds. `crucible exemplar` and `crucible evaluator` run one role per
// process; `crucible run` hosts several in one process.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/base/result.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/metrics/registry.hpp"
#include "runtime/node/worker_actor.hpp"

namespace crucible::roles {

// A started role: the handler to give a worker actor, the job kinds to
// register, and the role's actor (to monitor and to stop).
struct service {
  std::shared_ptr<node::job_handler> handler;
  std::vector<std::string> job_kinds;
  caf::actor actor;
  std::string description;  // for logs
  std::vector<caf::actor> companions;  // actors the service started beside it (its own bus clients): stopped with it
  bool required = false;          // detectors: registered as required (the referee waits for it)
  std::uint32_t deadline_ms = 0;  // detectors: how long the referee waits for its verdict
  // Events the service publishes through its worker's connection (the
  // exemplar store's ExemplarBuckets); null: none.
  std::shared_ptr<node::event_outbox> events;
};

struct exemplar_service_options {
  std::string db_dir = "exemplars";  // RocksDB directory of the store
  std::string selector;              // bucket (default), uniform, island
  std::string scale;                 // linear (default) or log
  double temperature = 0;            // 0: the store's default (1.0)
  double bucket_width = 0;           // 0: the store's default (0.1)
  // Imported into the store before it serves, each time it starts (a
  // repeated import changes nothing; actors/exemplar/exemplar_import.hpp):
  // exemplar files or CUDA-L1's release. CUDA-L1 rows take the rewards of
  // seed_settled (this evaluator's results files; CUDA-L1's own scores never)
  // and are named after their task files under seed_tasks_dir (a KernelBench
  // folder, the rollouts' tasks_dir). Default: none.
  std::vector<std::string> seed_files;
  std::vector<std::string> seed_settled;
  std::string seed_tasks_dir;
};

// Job kinds exemplar.sample (ExemplarQuery -> ExemplarAnswer) and
// exemplar.insert (Settlement -> "inserted", "duplicate" or "ignored"); it
// publishes each task's buckets as ExemplarBuckets events (the dashboard's
// exemplar panel; actors/exemplar/exemplar_actor.hpp says when).
// Errors: the store cannot open, bad options.
result<service> spawn_exemplar_service(caf::actor_system& sys, const exemplar_service_options& options,
                                       const std::string& name);

struct evaluator_service_options {
  std::string device = "cpu";                  // cpu or cuda:N
  std::filesystem::path tasks = "configs/tasks";  // a task id names ROOT/ID/task.py or ROOT/ID.py
  std::string protocol = "default";            // measurement protocol name
  bool strict = false;                         // the protocol's strict tolerances (protocol.hpp)
  std::vector<std::string> tolerances;         // "ATOL[:RTOL]" or "DTYPE=ATOL[:RTOL]" (apply_tolerance)
  std::vector<int> cores;                      // CPU cores of its sandbox workers; default: the last core
  std::uint32_t warm_spares = 1;               // spare workers kept on CPU (worker_pool.hpp); default 1
  // Jobs held beyond the one being measured, their syntax check and compile
  // run ahead on other cores (cpu_stage.hpp); -1: 2 on a GPU, 0 on CPU
  // (where a held job would wait for this evaluator while another is free).
  int prefetch = -1;
  // Where its families go (actors/evaluator/evaluator_metrics.hpp); null: none.
  metrics::registry_ptr metrics;
};

// The bus slots of an evaluator with these options: the running job and
// the prefetched ones.
std::uint32_t evaluator_slots(const evaluator_service_options& options);

// Job kinds measure and verify:MODEL (Candidate -> Measurement), MODEL being
// the device's model ("cpu", "NVIDIA H200"). Errors: bad device, protocol or
// tasks folder.
result<service> spawn_evaluator_service(caf::actor_system& sys, const evaluator_service_options& options,
                                        const std::string& name);

// `crucible exemplar` and `crucible evaluator`.
cli::command add_exemplar_role(CLI::App& app);
cli::command add_evaluator_role(CLI::App& app);

}  // namespace crucible::roles
