// What every `crucible ROLE --connect HUB` process that serves jobs does:
// read [log] and [bus], join the hub under a name, start the role's service
// (roles.hpp) behind a worker actor, and run until a signal or a failure.
// Used by the role commands in this folder.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "runtime/metrics/registry.hpp"
#include "runtime/roles/roles.hpp"

namespace crucible::roles {

struct role_args {
  std::string config, connect, name, log_level, keys, metrics;
};

// Adds --config, --connect, --name, --keys, --log-level and --metrics to cmd.
void add_role_options(CLI::App& cmd, role_args& args, const std::string& role);

// metrics: the process's registry for the role's own families (null: off).
using spawn_service =
    std::function<result<service>(caf::actor_system&, const std::string& name, const metrics::registry_ptr& metrics)>;

// Returns the process's exit status.
int serve(const std::string& role, msg::Role wire_role, std::uint32_t slots, const role_args& args,
          const spawn_service& spawn);

}  // namespace crucible::roles
