// The learner actor: owns the trainer (trainer.hpp) on its own thread
// (detached: a training step blocks for seconds) and speaks plain C++
// messages that mirror messages/domain.fbs; the bus bridge in
// learner_role.cpp converts, the actor never sees transport.
//
//   group:  a RolloutGroup. Not admitted (too stale, bad) -> the error at
//           once. Admitted -> buffered; the reply comes when a batch of
//           groups_per_batch has been trained on ("trained in version N"), so
//           the hub keeps the job until then and a learner killed mid-batch
//           loses nothing (the jobs are re-queued to its successor).
//   start:  may a rollout at version v start a group? (admission.hpp)
//   latest: the latest publication (version 0 is published at start).
//   chunk:  chunk i of the latest version's safetensors bytes.
//
// After each version: a line in metrics_file, a checkpoint every
// checkpoint_every versions, and a publication (publication.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/learner/learner_options.hpp"
#include "actors/learner/publication.hpp"
#include "actors/learner/rollout_batch.hpp"
#include "runtime/base/result.hpp"
#include "runtime/metrics/registry.hpp"

namespace crucible::learner {

using group_atom = caf::atom_constant<caf::atom("lgroup")>;
using start_atom = caf::atom_constant<caf::atom("lstart")>;
using latest_atom = caf::atom_constant<caf::atom("llatest")>;
using chunk_atom = caf::atom_constant<caf::atom("lchunk")>;

// The answer to a group or chunk request: ok with text or bytes, or the error.
struct learner_reply {
  bool ok = false;
  std::string text;                // "trained in version 3", or the error
  std::vector<std::uint8_t> data;  // chunk bytes
};

using learner_actor = caf::typed_actor<
    caf::replies_to<group_atom, rollout_group>::with<learner_reply>,
    caf::replies_to<start_atom, std::string, std::uint64_t, std::uint64_t>::with<bool>,
    caf::replies_to<latest_atom>::with<publication>,
    caf::replies_to<chunk_atom, std::uint64_t, std::uint32_t>::with<learner_reply>>;

// Called on the actor's thread after each version is published: the
// publication and, in chunk mode, the weights' bytes (empty with a path;
// valid during the call). The learner role announces them as
// PolicyPublication and PolicyChunk events. Must not block for long.
using publish_hook = std::function<void(const publication& p, std::span<const std::uint8_t> weights)>;

// Loads options.policy (and the reference), resumes from
// options.checkpoint_dir when it holds a checkpoint, publishes the current
// version and spawns the actor. With `metrics`, the actor records its steps
// and publications there (learner_metrics.hpp). Errors of loading, resuming
// or publishing.
result<learner_actor> spawn_learner_actor(caf::actor_system& system, const learner_options& options,
                                          publish_hook on_publish = {}, metrics::registry_ptr metrics = {});

// Stage 1 without the bus: trains options.policy on options.sft_data
// (sft_data.hpp) for `epochs` passes in batches of groups_per_batch, a line
// of metrics per batch, then checkpoints (when checkpoint_dir is set) and
// publishes the result (to publish_dir when set: the publication's path is
// the trained policy's folder; under LoRA the adapters go to v-N and the
// path names v-N-merged, the adapters merged into the base). Errors of
// loading, the data, training or writing.
result<publication> run_sft(const learner_options& options, std::uint64_t epochs);

}  // namespace crucible::learner

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(crucible::learner::rollout_group)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(crucible::learner::learner_reply)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(crucible::learner::publication)
