#include "actors/evaluator/evaluator_actor.hpp"

namespace crucible::evaluator {
namespace {

struct evaluator_state {
  std::unique_ptr<evaluator> ev;
  static inline const char* name = "evaluator";
};

evaluator_actor::behavior_type evaluator_behavior(evaluator_actor::stateful_pointer<evaluator_state> self,
                                                  evaluator_options options,
                                                  std::shared_ptr<compile_cache> cache) {
  self->state.ev = std::make_unique<evaluator>(std::move(options), std::move(cache));
  return {
      [self](evaluate_atom, const eval_request& request,
             const protocol_options& protocol) -> caf::result<evaluation> {
        auto r = self->state.ev->evaluate(request, protocol);
        if (!r) return caf::make_error(caf::sec::runtime_error, r.error().text());
        return std::move(r.value());
      },
  };
}

}  // namespace

evaluator_actor spawn_evaluator(caf::actor_system& system, evaluator_options options,
                                std::shared_ptr<compile_cache> cache) {
  return system.spawn<caf::detached>(evaluator_behavior, std::move(options), std::move(cache));
}

}  // namespace crucible::evaluator
