// What the hub actor writes into the dashboard's board (runtime/dashboard):
// the fleet and the queues from its core about once a second, and every
// Settlement event (whichever process the referee runs in) and
// ExemplarBuckets event (whichever process the exemplar store runs in) it
// forwards.
// Called on the hub actor's thread.
#pragma once

#include "runtime/bus/transport.hpp"
#include "runtime/dashboard/board.hpp"
#include "runtime/hub/hub_core.hpp"

namespace crucible::node {

void show_hub(const hub::hub_core& core, dashboard::board& board, hub::clock::time_point now);

// A Settlement or ExemplarBuckets event goes onto the board (the buckets as
// of now), and a PeerEvent (which the hub publishes, so it reaches the board
// of a `crucible dashboard` process only); other events and frames are let
// be. Also called by `crucible dashboard` for each event it hears.
void show_event(const bus::frame& f, dashboard::board& board, std::size_t max_message_bytes, hub::clock::time_point now);

}  // namespace crucible::node
