// A process's end of the bus: direct messages to and from named peers, and
// events by topic. Implementations: zmq_transport (tcp, ipc, inproc; in
// zmq_transport.hpp) and memory_transport (a test seam with fault injection,
// in memory_transport.hpp). The role actor that faces the bus owns its
// transport and is that connection's only I/O thread (runtime/node); it
// sees this interface, never a ZeroMQ header.
//
// Not thread-safe except wake(): one thread calls send/publish/receive.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::bus {

using bytes = std::vector<std::uint8_t>;

enum class channel : std::uint8_t {
  direct,  // point to point: hub <-> one worker or client
  event,   // published on a topic, fanned out by the hub
};

// One received message. peer is the sender's routing id (on the hub) or
// empty (at a worker, where everything direct comes from the hub).
struct frame {
  channel via = channel::direct;
  std::string peer;
  std::string topic;
  bytes data;
};

class transport {
 public:
  virtual ~transport() = default;

  // Sends data to peer (the hub side names a registered peer; a worker's
  // transport ignores peer and sends to the hub). Errors: errc::unavailable
  // when the peer is unknown or the queue is full.
  virtual status send(std::string_view peer, std::span<const std::uint8_t> data) = 0;

  // send() that takes the buffer: an implementation may hand it to the
  // socket without a copy (zmq_transport does).
  virtual status send_owned(std::string_view peer, bytes data) { return send(peer, data); }

  // Sends messages to peer, in order. An implementation may carry them as
  // one transport message (zmq_transport does, see batch.hpp); the
  // receiver's receive() returns them one by one either way.
  virtual status send_batch(std::string_view peer, std::span<const std::span<const std::uint8_t>> messages) {
    for (auto m : messages) CRUCIBLE_TRY(send(peer, m));
    return {};
  }

  // Publishes data on topic to every subscriber of a prefix of topic.
  virtual status publish(std::string_view topic, std::span<const std::uint8_t> data) = 0;

  // Subscribes to events whose topic starts with prefix ("" is everything).
  virtual status subscribe(std::string_view prefix) = 0;

  // Appends up to max received frames to out. When none is ready, waits up
  // to timeout, or until wake() is called from another thread.
  virtual status receive(std::vector<frame>& out, std::size_t max, std::chrono::milliseconds timeout) = 0;

  // Makes a blocked receive() return early. Any thread.
  virtual void wake() = 0;

  // "zmq router tcp://*:5555" and the like, for logs.
  virtual std::string describe() const = 0;
};

}  // namespace crucible::bus
