// Atoms and message types that cross actor boundaries inside a process.
// CAF 0.17: atoms are atom_constant<atom("...")> (10 characters at most);
// types that never leave the process are allowed without serialization.
#pragma once

#include <caf/all.hpp>

#include "runtime/bus/transport.hpp"

namespace crucible::node {

using frames_atom = caf::atom_constant<caf::atom("frames")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
using stats_atom = caf::atom_constant<caf::atom("stats")>;
using done_atom = caf::atom_constant<caf::atom("done")>;

// Builds the actor system configuration every crucible process uses.
void configure(caf::actor_system_config& cfg, std::size_t threads);

}  // namespace crucible::node

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(std::vector<crucible::bus::frame>)
