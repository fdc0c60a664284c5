// The subcommands of `crucible`. Each add_* function declares one
// subcommand's options on app and returns the action that runs it when the
// user chose it; main.cpp calls them all. Actions return the exit status.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace crucible::cli {

using action = std::function<int()>;
struct command {
  CLI::App* app;
  action run;
};

command add_hub_command(CLI::App& app);
command add_worker_command(CLI::App& app);
command add_submit_command(CLI::App& app);
command add_run_command(CLI::App& app);
command add_keys_command(CLI::App& app);
// `crucible dashboard --connect HUB` (dashboard_command.cpp).
command add_dashboard_command(CLI::App& app);
// `crucible kernels export` (kernels_command.cpp).
command add_kernels_command(CLI::App& app);
// A role whose implementation has not landed yet: --help describes it;
// running it says which issue brings it and exits 2.
command add_pending_role(CLI::App& app, const std::string& role, const std::string& description,
                         const std::string& issue);

}  // namespace crucible::cli
