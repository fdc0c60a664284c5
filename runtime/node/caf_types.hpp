// Atoms of the runtime's actors, and the actor system's configuration.
// CAF 0.17: atoms are atom_constant<atom("...")> (10 characters at most).
#pragma once

#include <caf/all.hpp>


namespace crucible::node {

using stats_atom = caf::atom_constant<caf::atom("stats")>;

// Builds the actor system configuration every crucible process uses.
void configure(caf::actor_system_config& cfg, std::size_t threads);

}  // namespace crucible::node
