// The referee role as actors: a settle-job handler (what the worker actor
// that serves "settle" jobs calls), the referee actor that owns the
// referee_core and its ledger, and a hub client (runtime/node/client_actor)
// through which it submits measure, verify, detect and exemplar.insert jobs,
// hears PeerEvents and publishes Settlement events.
//
// Mailbox of the referee actor (all sent by the pieces above, never by other
// roles): settle_atom + settle_request, result_atom + job_outcome,
// peer_atom + PeerEvent bytes, tick_atom (its own, every tick), stats_atom ->
// std::string. Spawned by `crucible hub` (when [referee] enabled),
// `crucible referee` and `crucible run`.
#pragma once

#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/referee/referee_core.hpp"
#include "runtime/bus/transport.hpp"
#include "runtime/metrics/registry.hpp"
#include "runtime/node/worker_actor.hpp"

namespace crucible::referee {

// What the referee needs to join a hub: two connections to it, one as the
// worker that serves settle jobs (under name), one as the client that
// submits the jobs it needs (under name + ".client").
struct referee_links {
  bus::peer_options peer;                       // name, liveness; role and kinds are set here
  std::shared_ptr<bus::transport> worker_transport;
  std::shared_ptr<bus::transport> client_transport;
  metrics::registry_ptr metrics;                // its families (referee_metrics.hpp); null: none
};

struct referee_service {
  caf::actor referee;   // the referee actor (monitor it; exit it to stop everything)
  caf::actor worker;    // the worker actor serving settle jobs
  std::string description;
};

// Starts the referee on kv (family "candidates"; confirmed hacks go to the
// hack database in family "hacks" of the same store). Errors: the ledger
// cannot be read to resume unsettled candidates.
result<referee_service> spawn_referee(caf::actor_system& sys, const referee_options& options,
                                      std::shared_ptr<storage::kv_store> kv, referee_links links);

// The slots a referee offers for settle jobs: each one only waits, so many.
inline constexpr std::uint32_t referee_slots = 4096;

}  // namespace crucible::referee
