#include "actors/evaluator/evaluator_actor.hpp"

namespace crucible::evaluator {
namespace {

struct evaluator_state {
  std::unique_ptr<evaluator> ev;
  static inline const char* name = "evaluator";
};

evaluator_actor::behavior_type evaluator_behavior(evaluator_actor::stateful_pointer<evaluator_state> self,
                                                  evaluator_options options,
                                                  std::shared_ptr<compile_cache> cache,
                                                  std::shared_ptr<cpu_stage> cpu) {
  self->state.ev = std::make_unique<evaluator>(std::move(options), std::move(cache), std::move(cpu));
  return {
      [self](evaluate_atom, const eval_request& request,
             const protocol_options& protocol) -> caf::result<evaluation> {
        auto r = self->state.ev->evaluate(request, protocol);
        if (!r) return caf::make_error(caf::sec::runtime_error, r.error().text());
        return std::move(r.value());
      },
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
