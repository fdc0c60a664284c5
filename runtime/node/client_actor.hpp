// An asynchronous client of the hub: submit a job and get a callback with its
// result, publish events, and hear events of the topics it subscribes to,
// without blocking the caller. A CAF blocking actor owns the transport and a
// client_session (the resends, duplicate suppression and acks of
// docs/bus.md) and is that connection's only I/O thread; callers reach it
// through a hub_client handle from any thread.
//
// Used by the referee (measure, verify, detect and exemplar.insert jobs) and
// by rollouts. Callbacks run on the client actor's thread: they must be
// quick and must not block (hand the result to your own actor).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "runtime/bus/client_session.hpp"
#include "runtime/bus/peer_options.hpp"
#include "runtime/bus/transport.hpp"

namespace crucible::node {

using result_callback = std::function<void(const bus::client_session::job_result&)>;
using event_callback = std::function<void(const std::string& topic, const bus::bytes& data)>;

struct client_actor_options {
  bus::peer_options peer;                // name, liveness and retry settings
  std::vector<std::string> subscribe;    // event topic prefixes to hear
  event_callback on_event;               // called for each event heard (optional)
  // Results are acknowledged only through hub_client::acknowledge(), after
  // the owner made them durable. Default: acknowledged on arrival.
  bool manual_acks = false;
  // Called for a result with no callback of its own: with manual acks, the
  // results of jobs a previous incarnation submitted (the hub resends them
  // when this one registers). Without it, such results are acknowledged.
  result_callback on_other_result;
};

namespace detail {
struct client_inbox;
}

// A thread-safe handle to a client actor. Copies share the actor.
class hub_client {
 public:
  hub_client() = default;
  hub_client(std::shared_ptr<detail::client_inbox> inbox, caf::actor actor)
      : inbox_(std::move(inbox)), actor_(std::move(actor)) {}

  // Submits a job (ids are unique for the run; a repeated id is ignored while
  // the first is outstanding or delivered). on_result is called once, with
  // the job's result; exclude_worker keeps it off that worker.
  void submit(std::string id, std::string kind, bus::bytes payload, result_callback on_result,
              std::string exclude_worker = {}) const;
  // Publishes an event (topic = the payload's kind; the hub checks).
  void publish(std::string topic, bus::bytes data) const;
  // Manual acks: the result of id is durable; the hub may forget the job.
  void acknowledge(std::string id) const;

  const caf::actor& actor() const { return actor_; }
  explicit operator bool() const { return static_cast<bool>(inbox_); }

 private:
  std::shared_ptr<detail::client_inbox> inbox_;
  caf::actor actor_;
};

hub_client spawn_client(caf::actor_system& sys, client_actor_options options,
                        std::shared_ptr<bus::transport> transport);

}  // namespace crucible::node
