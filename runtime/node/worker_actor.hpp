// A worker role as a CAF actor that is also the I/O thread of its bus
// connection: it owns the transport (through the transport interface), the
// worker side of the protocol (worker_session), and hands each job to a
// job_handler, the part that differs between roles (the evaluator measures
// kernels, the exemplar store samples, the echo handler answers test and
// benchmark jobs). Frames and completions are handled on one thread with no
// hand-off (see hub_actor.hpp for why).
//
// Mailbox: stats_atom -> std::string; an exit message stops it. Spawned by
// `crucible worker`, `crucible run` and the roles that take jobs.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include <caf/all.hpp>

#include "runtime/bus/outbox.hpp"
#include "runtime/bus/peer_options.hpp"
#include "runtime/bus/transport.hpp"
#include "runtime/bus/worker_session.hpp"
#include "runtime/node/caf_types.hpp"

namespace crucible::node {

// What a worker does with a job. run() is called on the worker actor's
// thread and must not block: a long job runs elsewhere and calls done (from
// any thread, exactly once) when it finishes.
class job_handler {
 public:
  virtual ~job_handler() = default;
  using done_fn = std::function<void(msg::JobStatus status, bus::bytes payload, std::string error)>;
  virtual void run(const bus::worker_session::job_request& job, done_fn done) = 0;
};

// The echo handler, for tests and benchmarks: "echo" and "null" return the
// payload; "sleep" returns it after as many milliseconds as its text says;
// anything else fails with a reason.
std::unique_ptr<job_handler> make_echo_handler();

// Events a role publishes through its worker's bus connection (the topic is
// the payload's kind; events are at most once, docs/bus.md): the exemplar
// store's bucket summaries. publish() from any thread, without blocking;
// the worker actor sends what waits at its next turn (within its tick,
// 50 ms at most). Holds at most `capacity` events: when full, the oldest is
// dropped, as a lost event would be. Shared by the role and its worker.
class event_outbox {
 public:
  explicit event_outbox(std::size_t capacity = 256) : capacity_(capacity) {}
  void publish(std::string topic, bus::bytes data);
  // What waits, oldest first; called by the worker actor.
  bus::outbox take();
  std::uint64_t dropped() const;

 private:
  const std::size_t capacity_;
  mutable std::mutex mu_;
  bus::outbox waiting_;       // GUARDED_BY(mu_)
  std::uint64_t dropped_ = 0;  // GUARDED_BY(mu_)
};

// events: what the role publishes through this connection; null: nothing.
caf::actor spawn_worker(caf::actor_system& sys, bus::peer_options options, std::shared_ptr<job_handler> handler,
                        std::shared_ptr<bus::transport> transport, std::shared_ptr<event_outbox> events = nullptr);

}  // namespace crucible::node
