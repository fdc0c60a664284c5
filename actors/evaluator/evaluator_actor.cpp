#include "actors/evaluator/evaluator_actor.hpp"

#include <chrono>
#include <deque>

namespace crucible::evaluator {
namespace {

// How long the queue waits before looking again when every queued job is
// still compiling ahead.
constexpr auto compile_poll = std::chrono::milliseconds(20);

struct queued_job {
  eval_request request;
  protocol_options protocol;
  caf::typed_response_promise<evaluation> promise;
};

struct evaluator_state {
  std::unique_ptr<evaluator> ev;
  std::deque<queued_job> queue;
  bool turn_pending = false;  // a next_atom is on its way
  static inline const char* name = "evaluator";
};

using evaluator_self = evaluator_actor::stateful_pointer<evaluator_state>;

void schedule_turn(evaluator_self self, bool later) {
  if (self->state.turn_pending || self->state.queue.empty()) return;
  self->state.turn_pending = true;
  if (later)
    self->delayed_send(self, compile_poll, next_atom::value);
  else
    self->send(self, next_atom::value);
}

// Measures the first ready job of the queue, or waits for one.
void take_turn(evaluator_self self) {
  auto& st = self->state;
  st.turn_pending = false;
  auto i = first_ready(st.queue.size(), [&](std::size_t k) { return st.ev->ready(st.queue[k].request); });
  if (!i) return schedule_turn(self, true);
  queued_job job = std::move(st.queue[*i]);
  st.queue.erase(st.queue.begin() + static_cast<std::ptrdiff_t>(*i));
  auto r = st.ev->evaluate(job.request, job.protocol);
  if (r)
    job.promise.deliver(std::move(r.value()));
  else
    job.promise.deliver(caf::make_error(caf::sec::runtime_error, r.error().text()));
  schedule_turn(self, false);
}

evaluator_actor::behavior_type evaluator_behavior(evaluator_self self,
                                                  evaluator_options options,
                                                  std::shared_ptr<compile_cache> cache,
                                                  std::shared_ptr<cpu_stage> cpu) {
  self->state.ev = std::make_unique<evaluator>(std::move(options), std::move(cache), std::move(cpu));
  return {
      [self](evaluate_atom, const eval_request& request,
             const protocol_options& protocol) -> caf::result<evaluation> {
        auto promise = self->make_response_promise<evaluation>();
        self->state.queue.push_back({request, protocol, promise});
        schedule_turn(self, false);
        return promise;
      },
      [self](next_atom) { take_turn(self); },
      [self](prime_atom, const std::string& device) {
        // A device that does not parse starts no spares; its jobs then fail
        // with that error in evaluate() (the role checked it already).
        (void)self->state.ev->prime(device);
      },
  };
}

}  // namespace

evaluator_actor spawn_evaluator(caf::actor_system& system, evaluator_options options,
                                std::shared_ptr<compile_cache> cache, std::shared_ptr<cpu_stage> cpu) {
  return system.spawn<caf::detached>(evaluator_behavior, std::move(options), std::move(cache), std::move(cpu));
}

}  // namespace crucible::evaluator
