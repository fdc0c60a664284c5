// Roles whose implementation has not landed: `--help` describes them and
// running one says which issue brings it.
#include "runtime/cli/commands.hpp"
#include "runtime/cli/process.hpp"

namespace crucible::cli {

command add_pending_role(CLI::App& app, const std::string& role, const std::string& description,
                         const std::string& issue) {
  auto* cmd = app.add_subcommand(role, description + " (not built yet: " + issue + ")");
  cmd->allow_extras();
  return {cmd, [role, issue] { return fail("the " + role + " role is not built yet; it arrives with " + issue); }};
}

}  // namespace crucible::cli
