// The evaluator actor: owns one device (a GPU, or a CPU core set) and runs
// one evaluation at a time on its own thread (a detached actor), so that
// workers that take minutes never block the scheduler. The bus adapter (the
// evaluator role's job loop) sends it measure jobs and relays the replies.
//
// Interface: (evaluate_atom, eval_request, protocol_options) -> evaluation.
// Requests queue and run one at a time, in order, except that a job whose
// CPU stage (syntax check, compile; cpu_stage.hpp) is still running ahead
// waits while a job behind it that is ready runs (first_ready): the device
// never idles on a build while other work is queued. An evaluation that could
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
using next_atom = caf::atom_constant<caf::atom("evalnext")>;

// (prime_atom, device): start the warm spares for that device now
// (evaluator::prime), before the first job. (next_atom): the actor's own
// turn to measure its next queued job; nothing else sends it.
using evaluator_actor =
    caf::typed_actor<caf::replies_to<evaluate_atom, eval_request, protocol_options>::with<evaluation>,
                     caf::reacts_to<prime_atom, std::string>, caf::reacts_to<next_atom>>;

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
