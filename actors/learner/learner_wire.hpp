// The learner's messages (messages/domain.fbs) to and from its plain C++
// types: RolloutGroup <-> rollout_group. The learner role decodes groups
// that arrive as jobs; rollouts (and tests) encode them. Torch-free.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <optional>
#include <string>
#include <string_view>

#include "actors/learner/rollout_batch.hpp"
#include "messages/codec.hpp"
#include "runtime/base/result.hpp"

namespace crucible::learner {

// Decodes a verified RolloutGroup. invalid_argument naming the group and
// sample when a sample lacks its prompt or completion, when the behaviour
// log-probs or the per-token versions do not match the completion's length,
// or when there are no samples; corrupt when a sample's per-token versions
// are off their 8-byte boundary (a buffer no FlatBuffers builder writes).
result<rollout_group> group_from(const msg::RolloutGroup& wire);

// Encodes `group` as sent by the rollout called `rollout`.
flatbuffers::Offset<msg::RolloutGroup> build_group(flatbuffers::FlatBufferBuilder& fbb, const rollout_group& group,
                                                   std::string_view rollout);

// The learner's answer to a learner.group job once the group's batch is
// trained: "trained in version N", N the version the step made (the batch
// was trained at N - 1). trained_version reads N back (the rollout's
// staleness metric); nothing for any other text.
std::string trained_text(std::uint64_t version);
std::optional<std::uint64_t> trained_version(std::string_view text);

// The learner's refusal of a learner.group job whose group is too stale to
// train (staleness_gate::admit): "stale: REASON". The rollout samples that
// group again with newer weights (is_stale_refusal tells it from other
// failures, which drop the group).
std::string stale_refusal(std::string_view reason);
bool is_stale_refusal(std::string_view text);

// A rollout's learner.start: may it start its group `number` with the
// weights of `version`? Text "VERSION NUMBER ROLLOUT" (the name last: it
// may hold spaces). start_text writes it; start_from reads it back,
// invalid_argument naming what is missing or not a number.
struct start_request {
  std::uint64_t version = 0, number = 0;
  std::string rollout;
};
std::string start_text(const start_request& s);
result<start_request> start_from(std::string_view text);

}  // namespace crucible::learner
