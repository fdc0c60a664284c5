// The three addresses of a hub, derived from the one a user types.
// tcp://HOST:PORT -> direct on PORT, events in on PORT+1, events out on PORT+2;
// ipc://PATH and inproc://NAME -> PATH, PATH.events-in, PATH.events-out.
#pragma once

#include <string>

#include "runtime/base/result.hpp"

namespace crucible::bus {

struct hub_endpoints {
  std::string direct;      // ROUTER (hub) <- DEALER (peers)
  std::string events_in;   // XSUB (hub) <- PUB (peers)
  std::string events_out;  // XPUB (hub) -> SUB (peers)
};

// Errors: errc::invalid_argument naming the address and what is wrong.
result<hub_endpoints> derive_endpoints(const std::string& address);

// The address peers connect to for an address the hub binds: "tcp://*:5555"
// becomes "tcp://127.0.0.1:5555"; others are unchanged.
std::string connectable(const std::string& bind_address);

}  // namespace crucible::bus
