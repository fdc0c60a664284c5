// What every long-running crucible command shares: loading its config,
// setting up logging, the actor system, and waiting for a signal or for an
// actor to fail. Called from the command functions in this folder only.
#pragma once

#include <string>
#include <vector>

#include <caf/all.hpp>
#include <CLI/CLI.hpp>

#include "runtime/config/config_file.hpp"
#include "runtime/dashboard/server.hpp"
#include "runtime/metrics/endpoint.hpp"

namespace crucible::cli {

// Every section a crucible config may hold. One file can configure a whole
// run; each role reads (and checks every key of) the sections it uses.
const std::vector<std::string>& known_sections();

// Loads path (or the defaults when empty) and checks that every section is
// one crucible knows. Prints the error and returns nullopt on failure.
std::optional<config::file> load_config(const std::string& path);

// The process's Prometheus endpoint (runtime/metrics/endpoint.hpp): at
// flag (a command's --metrics) when given, else at [metrics] listen of file;
// null when neither names one. Logs its URL. Errors name the option and its
// value: a section that does not read, an address that is not HOST:PORT, a
// port nothing can listen on.
result<std::unique_ptr<metrics::endpoint>> open_metrics(const config::file& file, const std::string& flag);
// Adds --metrics HOST:PORT (into flag) to a role's command.
void add_metrics_option(CLI::App& cmd, std::string& flag);

// The process's dashboard (runtime/dashboard/server.hpp, docs/dashboard.md):
// at flag (--dashboard) when given, else at [dashboard] listen of file; null
// when neither names one. Logs and prints its URL. Errors as open_metrics.
result<std::unique_ptr<dashboard::server>> open_dashboard(const config::file& file, const std::string& flag);
// Adds --dashboard HOST:PORT (into flag) to a command that hosts the hub.
void add_dashboard_option(CLI::App& cmd, std::string& flag);

// Prints "crucible: <error>" to stderr; returns the exit status for it.
int fail(const error& e);
int fail(const std::string& message);

// The default name of a peer: ROLE-HOST-PID.
std::string default_name(const std::string& role);

// Installs SIGINT/SIGTERM handlers that request a shutdown.
void install_signal_handlers();
bool shutdown_requested();

// Blocks until a signal arrives (returns 0) or one of actors goes down
// (logs its reason and returns 1), then asks every one of actors to exit.
// Call it last: if the process has not exited 15 s later (an actor that
// never stops would hang the actor system's destructor), it exits with a
// critical log line.
int wait_for_shutdown(caf::actor_system& sys, const std::vector<caf::actor>& actors);

}  // namespace crucible::cli
