// What a protocol core wants sent: the actor that owns the transport (or a
// test) drains it into the transport with transmit(). Cores never touch a
// transport themselves.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "runtime/bus/transport.hpp"

namespace crucible::bus {

struct outbound {
  channel via = channel::direct;
  std::string to;  // peer routing id (direct) or topic (event)
  bytes data;
};
using outbox = std::vector<outbound>;

// Sends every message of out: direct messages grouped per peer, in their
// order, small ones through send_batch(), large ones alone through
// send_owned() (their bytes are moved out); events one by one. Returns how many sends
// failed (each a peer that is gone or whose queue is full: the protocol
// resends what matters). Called by the hub, worker and client loops once
// per turn.
std::size_t transmit(transport& t, outbox& out);

}  // namespace crucible::bus
