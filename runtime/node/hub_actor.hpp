// The hub role as a CAF actor: it owns the hub's protocol core (hub_core) and
// its ledger, takes frame batches from the process's bus loop, commits the
// ledger before replying, and ticks heartbeats and liveness on a timer.
// Spawned by `crucible hub` and `crucible run`.
#pragma once

#include <memory>

#include <caf/all.hpp>

#include "runtime/hub/hub_options.hpp"
#include "runtime/node/bus_loop.hpp"
#include "runtime/node/caf_types.hpp"
#include "storage/kv_store.hpp"

namespace crucible::node {

// frames: a batch from the bus loop; tick: timer; stats: one-line summary.
using hub_actor = caf::typed_actor<caf::reacts_to<frames_atom, std::vector<bus::frame>>,
                                   caf::reacts_to<tick_atom>,
                                   caf::replies_to<stats_atom>::with<std::string>>;

// Spawns the hub. It recovers unfinished jobs from the ledger in kv before
// handling anything; when that fails the actor quits with the error (the
// process reports it and exits). loop must outlive the actor.
hub_actor spawn_hub(caf::actor_system& sys, hub::hub_options options, std::shared_ptr<storage::kv_store> kv,
                    bus_loop& loop);

}  // namespace crucible::node
