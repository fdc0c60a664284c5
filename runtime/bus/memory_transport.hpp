// An in-memory bus for tests: the same transport interface as ZeroMQ, on a
// virtual clock, with faults injected from a seed: messages dropped,
// duplicated, delayed (which reorders them) and peers cut off. Deterministic,
// so a failing schedule replays exactly. receive() never blocks: time moves
// only when the test calls advance().
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "runtime/bus/transport.hpp"

namespace crucible::bus {

struct fault_plan {
  double drop = 0;                         // probability a message is lost
  double duplicate = 0;                    // probability a message arrives twice
  std::chrono::milliseconds min_delay{0};  // each copy is delayed uniformly in
  std::chrono::milliseconds max_delay{0};  // [min_delay, max_delay]: reorders
  std::uint64_t seed = 1;
};

class memory_network {
 public:
  using time_point = std::chrono::steady_clock::time_point;

  explicit memory_network(fault_plan plan = {});
  ~memory_network();

  // The hub's end (one per network) and a peer's end under name.
  std::unique_ptr<transport> hub_end();
  std::unique_ptr<transport> peer_end(const std::string& name);

  // Moves the virtual clock; messages due by then become receivable.
  void advance(std::chrono::milliseconds dt);
  time_point now() const;

  // Cuts a peer off (as if its process died or its link broke): everything
  // to and from it is lost until reconnect().
  void cut(const std::string& name);
  void reconnect(const std::string& name);

  // Faults apply only while enabled (to let a test settle at the end).
  void set_faults(bool enabled);

  std::size_t in_flight() const;
  std::size_t dropped() const;
  std::size_t duplicated() const;

  struct state;

 private:
  std::shared_ptr<state> state_;
};

}  // namespace crucible::bus
