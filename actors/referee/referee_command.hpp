// `crucible referee --connect HUB`: the referee as its own process, for
// scale, with its own RocksDB ledger (--ledger, or [referee] ledger_dir).
// Linked into the crucible binary by runtime/cli when the referee is built.
#pragma once

#include "runtime/cli/commands.hpp"

namespace crucible::referee {

cli::command add_referee_command(CLI::App& app);

}  // namespace crucible::referee
