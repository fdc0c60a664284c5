// [run]: what `crucible run CONFIG` starts and how long it runs. Read by
// run_command.cpp; docs/configuration.md lists every key with its default.
// The roles it starts read their own sections ([hub], [referee], [sft],
// [learner], [rollout], [detector]).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/base/result.hpp"
#include "runtime/config/config_file.hpp"

namespace crucible::dashboard {
class board;
}  // namespace crucible::dashboard

namespace crucible::cli {

struct run_options {
  // "loop": the RL loop (stage 1 then stage 3 with rollouts, evaluators,
  // referee, detectors, exemplar store and learner); "variants": settle
  // every variant file of the task set once (a smoke job for the reward
  // path). Default "loop".
  std::string job = "loop";

  // ---- both jobs
  std::uint32_t evaluators = 1;            // CPU evaluators in this process (without devices); default 1
  // Warm spare workers per CPU evaluator (actors/evaluator/worker_pool.hpp);
  // default 1. GPU evaluators keep the evaluator's own default.
  std::uint32_t warm_spares = 1;
  // One evaluator per device ("cuda:0", "cuda:1", ...) instead of CPU ones.
  // Default [] (CPU evaluators).
  std::vector<std::string> devices;
  std::string protocol = "quick";          // their measurement protocol; default "quick"
  bool strict = false;                     // their strict tolerances (evaluator --strict); default false
  // Their tolerance settings, "ATOL[:RTOL]" or "DTYPE=ATOL[:RTOL]" (evaluator
  // --tolerance). Default [] (the protocol's: 1e-2 for every dtype).
  std::vector<std::string> tolerances;
  std::string tasks_dir = "configs/tasks"; // root of task ids; default "configs/tasks"
  double exemplar_temperature = 1.0;       // the exemplar store's bucket temperature (Equation 1); default 1
  // Files imported into the exemplar store before the run's roles start
  // (`crucible exemplars import`'s formats): exemplar rows, or CUDA-L1's
  // release, whose rows take the rewards of exemplar_settled (this
  // evaluator's results files, tools/gpu/cuda_l1_suite.py) and are named
  // after their files under tasks_dir. Default [] (the store starts empty).
  std::vector<std::string> exemplar_seed;
  std::vector<std::string> exemplar_settled;  // default []
  // Detectors started in this process, by kind ("static"); each reads
  // [detector] for the rest of its options. Default [] (none).
  std::vector<std::string> detectors;

  // ---- job "variants"
  std::vector<std::string> tasks;  // task ids; default: every folder under tasks_dir/cpu
  std::vector<std::string> variants = {"faster", "equal", "slower", "incorrect", "crashing", "not_compiling"};
  std::uint32_t exemplars = 2;     // exemplars drawn per task at the end; default 2
  double timeout_s = 1800;         // give up on the measurements after this long; default 1800

  // ---- job "loop"
  // Hugging Face folder of the initial policy. One with config.json and
  // tokenizer.json but no weights is initialised at random (seed): a policy
  // trained from scratch. Required.
  std::string policy;
  std::uint64_t seed = 0;           // random initialisation; default 0
  std::string sft_data;             // stage 1 corpus (JSON Lines); default "" (no stage 1)
  std::uint64_t sft_epochs = 1;     // passes over it; default 1
  std::uint32_t rollouts = 1;       // rollout actors in this process; default 1
  std::uint64_t groups = 0;         // groups to settle, over all rollouts; 0 = until a signal; default 0
  double time_limit_s = 0;          // stop stage 3 after this long (a resumed run starts afresh); 0 = none; default 0

  // Not a [run] key: the dashboard the hub and the exemplar store show what
  // they do on, set by run_command from --dashboard or [dashboard] listen
  // (docs/dashboard.md). Default null: none.
  std::shared_ptr<dashboard::board> board;
};

// [run]. Errors: unknown keys, wrong types, a job other than loop or
// variants, 0 evaluators or rollouts, the loop without a policy.
status read(config::section s, run_options& o);

}  // namespace crucible::cli
