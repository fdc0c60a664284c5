// `crucible detector`: one detector as a worker on the bus. It registers
// under its name with job kind "detect:NAME", required or advisory and its
// deadline (the hub republishes both in PeerEvent for the referee), takes
// DetectRequest jobs and answers each with a Verdict. Joining and leaving a
// running hub needs nothing but starting and stopping this process
// (actors/detector/README.md).
#pragma once

#include <string>

#include "actors/detector/detector_options.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/roles/roles.hpp"

namespace crucible::detector {

// The service: a detector actor behind a job handler. Errors: bad options,
// a rule file that does not load.
result<roles::service> spawn_detector_service(caf::actor_system& sys, const detector_options& options);

// Adds the `detector` subcommand to app (runtime/cli/main.cpp calls it).
cli::command add_detector_role(CLI::App& app);

}  // namespace crucible::detector
