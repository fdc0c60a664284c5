// The detector actor: owns one detector (static rules or the judge) and
// examines candidates one at a time on its own thread (detached: the judge
// blocks on HTTP). It fills the verdict's candidate id, detector name and
// required flag. Who calls it: the detector role's job handler
// (detector_role.cpp) through node::ask; tests directly.
#pragma once

#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/detector/detector.hpp"

namespace crucible::detector {

}  // namespace crucible::detector

// Local messages only: they never cross a CAF network boundary.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(crucible::detector::detect_input)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(crucible::detector::verdict)

namespace crucible::detector {

using examine_atom = caf::atom_constant<caf::atom("dexamine")>;

using detector_actor = caf::typed_actor<caf::replies_to<examine_atom, detect_input>::with<verdict>>;

// name and required go into every verdict.
detector_actor spawn_detector_actor(caf::actor_system& system, std::unique_ptr<detector> impl, std::string name,
                                    bool required);

}  // namespace crucible::detector
