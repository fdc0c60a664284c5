#include "actors/detector/detector_actor.hpp"

#include <spdlog/spdlog.h>

namespace crucible::detector {

detector_actor spawn_detector_actor(caf::actor_system& system, std::unique_ptr<detector> impl, std::string name,
                                    bool required) {
  std::shared_ptr<detector> d = std::move(impl);
  return system.spawn<caf::detached>([d, name, required](detector_actor::pointer) -> detector_actor::behavior_type {
    return {
        [d, name, required](examine_atom, const detect_input& in) {
          verdict v = d->examine(in);
          v.candidate_id = in.candidate_id;
          v.detector = name;
          v.required = required;
          spdlog::info("detector {}: candidate {} of task {}: {}", name, in.candidate_id, in.task_id, describe(v));
          return v;
        },
    };
  });
}

}  // namespace crucible::detector
