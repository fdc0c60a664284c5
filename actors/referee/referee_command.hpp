// `crucible referee --connect HUB`: the referee as its own process, for
// scale, with its own RocksDB ledger (--ledger, or [referee] ledger_dir).
// `crucible settle --connect HUB --task T --candidate FILE`: submits one
// candidate to the hub's referee and prints its settlement as JSON.
// Linked into the crucible binary by runtime/cli when the referee is built.
#pragma once

#include "runtime/cli/commands.hpp"

namespace crucible::referee {

cli::command add_referee_command(CLI::App& app);
cli::command add_settle_command(CLI::App& app);

}  // namespace crucible::referee
