// A worker role as a CAF actor: it owns the worker side of the bus protocol
// (worker_session) and hands each job to a job_handler, the part that
// differs between roles (the evaluator measures kernels, the echo handler
// answers test and benchmark jobs). Spawned by `crucible worker` and by
// roles that take jobs.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "runtime/bus/peer_options.hpp"
#include "runtime/bus/worker_session.hpp"
#include "runtime/node/bus_loop.hpp"
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

// frames: a batch from the bus loop; tick: timer; done: a job finished
// (id, status, payload, error); stats: one-line summary.
using worker_actor = caf::typed_actor<caf::reacts_to<frames_atom, std::vector<bus::frame>>,
                                      caf::reacts_to<tick_atom>,
                                      caf::reacts_to<done_atom, std::string, int, bus::bytes, std::string>,
                                      caf::replies_to<stats_atom>::with<std::string>>;

worker_actor spawn_worker(caf::actor_system& sys, bus::peer_options options, std::shared_ptr<job_handler> handler,
                          bus_loop& loop);

}  // namespace crucible::node
