// The ZeroMQ transport (libzmq 4.3 through cppzmq). The hub binds a ROUTER
// for direct messages and an XSUB/XPUB pair for events; every other process
// connects a DEALER (its routing id is its registered name, so a restarted hub
// can still route to it), a PUB and a SUB. Addresses: see endpoints.hpp.
// This header keeps zmq.hpp out of everything that includes it.
#pragma once

#include <memory>
#include <string>

#include "runtime/bus/transport.hpp"

namespace crucible::bus {

struct zmq_options {
  int send_high_water = 100'000;   // messages queued per peer before send fails (ZMQ_SNDHWM)
  int receive_high_water = 100'000;  // ZMQ_RCVHWM
  int linger_ms = 200;             // how long close() waits to flush (ZMQ_LINGER)
  // A key folder (curve_keys.hpp; `--keys`, `[bus] keys`): every socket
  // CURVE-encrypted, the hub's accepting only the peers of its allow list.
  // Empty: plain TCP or IPC, anyone who reaches the port may join.
  std::string keys;
};

// The hub's end. Errors: errc::io naming the address that could not be bound;
// a key folder that cannot be read, naming the file.
result<std::unique_ptr<transport>> bind_hub_transport(const std::string& address,
                                                      const zmq_options& options = {});

// A peer's end, connecting to a hub at address under name.
result<std::unique_ptr<transport>> connect_peer_transport(const std::string& address,
                                                          const std::string& name,
                                                          const zmq_options& options = {});

}  // namespace crucible::bus
