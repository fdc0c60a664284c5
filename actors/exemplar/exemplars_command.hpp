// `crucible exemplars ...`: add, sample, stats and import on an exemplar
// store in a RocksDB directory, for seeding a run and for checking the
// sampler by eye.
//
//   crucible exemplars add --db DIR --task T --score S --code FILE [--id ID]
//   crucible exemplars sample --db DIR --task T -n 2 --temperature TAU --draws K [--seed S] [--json]
//   crucible exemplars stats --db DIR [--task T] [--json]
//   crucible exemplars import FILE --db DIR
//
// Who calls it: runtime/cli/main.cpp adds it to the top-level app. On bad
// input or a storage failure the subcommand prints a message naming the
// file, line and field to the error stream and throws CLI::RuntimeError
// (exit code 1, the same message in what()); CLI11_PARSE / app.exit() return
// that code without printing again. sample and stats refuse a --db that does
// not exist; add and import create it.
#pragma once

#include <ostream>

#include <CLI/CLI.hpp>

namespace crucible::exemplar {

// Adds the `exemplars` subcommand to app, printing results to std::cout.
void add_exemplars_command(CLI::App& app);
// The same, printing results to out and errors to err (both must outlive
// app's parsing); for tests.
void add_exemplars_command(CLI::App& app, std::ostream& out, std::ostream& err);

}  // namespace crucible::exemplar

namespace crucible {
using exemplar::add_exemplars_command;
}  // namespace crucible
