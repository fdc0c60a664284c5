// `crucible rollout --connect HUB --model DIR`: a rollout process that
// samples groups with the policy, has them settled by the hub's referee and
// sends them to the learner ([rollout] in docs/configuration.md).
// `--print-prompt TASK` prints the prompt a group on TASK would get (without
// exemplars) and exits. Linked into the crucible binary by runtime/cli.
#pragma once

#include "runtime/cli/commands.hpp"

namespace crucible::rollout {

cli::command add_rollout_command(CLI::App& app);

}  // namespace crucible::rollout
