// A worker in the test's own process, joined to a hub on loopback with the
// fast liveness of the integration tests (heartbeat 100 ms, dead after
// 1.5 s): a fake evaluator or detector whose answers the test decides.
// Header-only, so that only the tests that use it link crucible_node.
//
// Who calls it: a test case's main thread, after any small_fs (which needs
// the process to have no thread yet). The worker stops when its
// test_worker goes, which must be before its actor_system (whose destructor
// waits for every actor): declare it after the system.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/bus/zmq_transport.hpp"
#include "runtime/node/worker_actor.hpp"

namespace crucible::testing {

// The worker actor, sent an exit when this goes (also when a REQUIRE throws).
class test_worker {
 public:
  explicit test_worker(caf::actor actor) : actor_(std::move(actor)) {}
  ~test_worker() {
    if (actor_) caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
  }
  test_worker(test_worker&&) = default;
  test_worker(const test_worker&) = delete;
  test_worker& operator=(const test_worker&) = delete;

 private:
  caf::actor actor_;
};

// Errors: the transport cannot be made (connect_peer_transport's).
inline result<test_worker> spawn_test_worker(caf::actor_system& sys, const std::string& address, const std::string& name,
                                            msg::Role role, std::vector<std::string> kinds,
                                            std::shared_ptr<node::job_handler> handler) {
  bus::peer_options o;
  o.name = name;
  o.role = role;
  o.job_kinds = std::move(kinds);
  o.heartbeat = std::chrono::milliseconds(100);
  o.dead_after = std::chrono::milliseconds(1500);
  auto t = bus::connect_peer_transport(address, name);
  if (!t) return t.error();
  return test_worker(node::spawn_worker(sys, o, std::move(handler), std::shared_ptr<bus::transport>(std::move(*t))));
}

}  // namespace crucible::testing
