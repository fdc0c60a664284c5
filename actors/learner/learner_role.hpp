// `crucible learner`: the learner on the bus. With objective grpo or
// reinforce it joins a hub and serves
//   learner.group   RolloutGroup -> "trained in version N" (answered once
//                   the group's batch is trained; Failed with the reason
//                   when the group is not admitted, e.g. too stale)
//   learner.start   text "V N ROLLOUT" (the rollout's version, its group's
//                   number, its name) -> "go" or "wait" (admission.hpp)
//   learner.latest  anything -> PolicyPublication of the latest version
//   learner.chunk   text "V I" -> PolicyChunk I of version V
// and announces every version as a PolicyPublication event followed (chunk
// mode) by PolicyChunk events, through a second connection named NAME-events
// (events are at most once: a rollout that missed some pulls them with
// learner.latest / learner.chunk).
// With objective sft it trains on sft_data and exits (no hub needed).
// Options: [learner] (docs/configuration.md), [log], [bus].
#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "actors/learner/learner_options.hpp"
#include "runtime/bus/peer_options.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/roles/roles.hpp"

namespace crucible::learner {

// The learner actor behind its job handler, with its events client joined
// to the hub at `connect` as NAME-events (peer gives the [bus] settings).
// `crucible learner` serves it; `crucible run` hosts it in its process.
// metrics: where the learner's families go (learner_metrics.hpp; null: off).
// Errors: loading the policy or resuming, connecting the events client.
result<roles::service> spawn_learner_service(caf::actor_system& sys, const learner_options& options,
                                             const std::string& connect, bus::peer_options peer,
                                             const std::string& name, metrics::registry_ptr metrics = {});

cli::command add_learner_role(CLI::App& app);

}  // namespace crucible::learner
