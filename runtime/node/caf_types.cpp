#include "runtime/node/caf_types.hpp"

namespace crucible::node {

void configure(caf::actor_system_config& cfg, std::size_t threads) {
  cfg.set("scheduler.max-threads", threads);
  // Roles are blocking actors with their own threads; the scheduler only
  // runs short helpers (ask.hpp). The sharing policy sleeps on a condition
  // variable when idle, where work stealing polls (about 4% of a core per
  // idle thread, and far more after each burst of work).
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("logger.console", caf::atom("none"));
}

}  // namespace crucible::node
