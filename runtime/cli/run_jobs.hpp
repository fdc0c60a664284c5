// The jobs `crucible run` knows ([run] job), each in its own file; the
// command (run_command.cpp) has read the config, made the run folder DIR
// and set up logging into DIR/run.log. Each returns the process's exit
// status. metrics: the registry of the process's one endpoint, every role's
// families on it (null: off).
#pragma once

#include <string>

#include "runtime/cli/run_options.hpp"
#include "runtime/config/config_file.hpp"
#include "runtime/metrics/registry.hpp"

namespace crucible::cli {

// "variants": every variant file of the task set settled once through the
// referee; contrastive exemplars drawn per task; DIR/summary.json.
int run_variants(const config::file& file, run_options run, const std::string& dir,
                 const metrics::registry_ptr& metrics);

// "loop": stage 1 on [run] sft_data, then stage 3 (GRPO) with rollouts until
// [run] groups are settled; summary, DIR/summary.json and DIR/report.html.
// `resume`: DIR holds an earlier run of the loop, which continues.
int run_loop(const config::file& file, const run_options& run, const std::string& dir, bool resume,
             const metrics::registry_ptr& metrics);

}  // namespace crucible::cli
