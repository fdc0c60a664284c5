// What a protocol core wants sent: the actor that owns the transport (or a
// test) drains it into the transport. Cores never touch a transport themselves.
#pragma once

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

}  // namespace crucible::bus
