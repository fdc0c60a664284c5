// What the hub actor writes into the dashboard's board (runtime/dashboard):
// the fleet and the queues from its core about once a second, and every
// Settlement event it forwards (whichever process the referee runs in).
// Called on the hub actor's thread.
#pragma once

#include "runtime/bus/transport.hpp"
#include "runtime/dashboard/board.hpp"
#include "runtime/hub/hub_core.hpp"

namespace crucible::node {

void show_hub(const hub::hub_core& core, dashboard::board& board, hub::clock::time_point now);

// A Settlement event goes onto the board; other events and frames are let be.
void show_event(const bus::frame& f, dashboard::board& board, std::size_t max_message_bytes);

}  // namespace crucible::node
