// The evaluator actor: owns one device (a GPU, or a CPU core set) and runs
// one evaluation at a time on its own thread (a detached actor), so that
// workers that take minutes never block the scheduler. The bus adapter (the
// evaluator role's job loop) sends it measure jobs and relays the replies.
//
// Interface: (evaluate_atom, eval_request, protocol_options) -> evaluation.
// Requests queue in the mailbox and run in order. An evaluation that could
// not run at all (evaluate()'s errors: bad device, cannot start Python,
// device busy) comes back as a caf::error with sec::runtime_error and the
// error text as context. Candidates' failures are evaluations, never errors.
#pragma once

#include <memory>

#include <caf/all.hpp>

#include "actors/evaluator/evaluate.hpp"

namespace crucible::evaluator {

using evaluate_atom = caf::atom_constant<caf::atom("evaluate")>;
using prime_atom = caf::atom_constant<caf::atom("prime")>;

// (prime_atom, device): start the warm spares for that device now
// (evaluator::prime), before the first job.
using evaluator_actor =
    caf::typed_actor<caf::replies_to<evaluate_atom, eval_request, protocol_options>::with<evaluation>,
                     caf::reacts_to<prime_atom, std::string>>;

// Spawns a detached evaluator. cache: shared with other evaluators in the
// process (compiles are then pooled and deduplicated); null makes its own.
// cpu: the CPU stage its caller prefetches through (cpu_stage.hpp); null
// makes its own.
evaluator_actor spawn_evaluator(caf::actor_system& system, evaluator_options options,
                                std::shared_ptr<compile_cache> cache = nullptr,
                                std::shared_ptr<cpu_stage> cpu = nullptr);

}  // namespace crucible::evaluator

// Local messages only: the bus carries evaluations as FlatBuffers
// (messages/domain.fbs Measurement), never as CAF-serialized types.
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(crucible::evaluator::eval_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(crucible::evaluator::protocol_options)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(crucible::evaluator::evaluation)
