#include "runtime/node/caf_types.hpp"

namespace crucible::node {

void configure(caf::actor_system_config& cfg, std::size_t threads) {
  cfg.set("scheduler.max-threads", threads);
  cfg.set("logger.console", caf::atom("none"));
}

}  // namespace crucible::node
