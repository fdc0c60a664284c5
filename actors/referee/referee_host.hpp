// Starting a referee that joins a hub over the real bus: used by
// `crucible hub` (the referee inside the hub process, sharing the hub's
// RocksDB), `crucible referee` (its own process and RocksDB) and
// `crucible run`.
#pragma once

#include <string>

#include "actors/referee/referee_actor.hpp"

namespace crucible::referee {

// Connects the referee's two links to the hub at address (peer gives its
// name and the [bus] liveness settings) and spawns it on kv.
// metrics: where its families go (referee_metrics.hpp); null: none.
// Errors: the address cannot be connected, the ledger cannot be read.
result<referee_service> start_referee(caf::actor_system& sys, const referee_options& options,
                                      std::shared_ptr<storage::kv_store> kv, bus::peer_options peer,
                                      const std::string& address, metrics::registry_ptr metrics = nullptr);

// The address a process on the hub's machine connects to for a bind address:
// "tcp://*:5555" and "tcp://0.0.0.0:5555" become "tcp://127.0.0.1:5555".
std::string local_address(const std::string& bind);

}  // namespace crucible::referee
