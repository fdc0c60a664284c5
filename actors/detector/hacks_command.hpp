// `crucible hacks ...`: the hack database (storage/hack_db.hpp) from the
// command line.
//
//   crucible hacks list [--db DIR] [--json]
//   crucible hacks show ID [--db DIR] [--json]
//   crucible hacks add --code FILE --task T --reason R [--id ID] [--feature F]... [--rules FILE] [--db DIR]
//   crucible hacks similar --code FILE [-k 3] [--db DIR] [--json]
//
// --db defaults to hub-ledger, the hub's database, where the referee records
// the hacks it settles. list, show and similar open it read-only, so they
// work while the hub runs; add needs the database to itself. add fills the features
// with the static rules (--rules, default configs/detectors/static.toml when
// present) that match the code, besides any --feature given.
//
// Who calls it: runtime/cli/main.cpp. A failure prints a message naming the
// file or id to the error stream and throws CLI::RuntimeError (exit code 1).
#pragma once

#include <ostream>

#include <CLI/CLI.hpp>

namespace crucible::detector {

void add_hacks_command(CLI::App& app);
// The same, printing to out and err (which must outlive parsing); for tests.
void add_hacks_command(CLI::App& app, std::ostream& out, std::ostream& err);

}  // namespace crucible::detector
