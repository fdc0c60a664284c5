// The rollout's messages on the wire (messages/domain.fbs is the contract):
// the Candidate of a settle job, the ExemplarQuery of an exemplar.sample job,
// the RolloutGroup of a learner job, and reading an ExemplarAnswer or a
// Settlement out of a job result. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/rollout/prompt.hpp"
#include "messages/codec.hpp"
#include "runtime/base/result.hpp"

namespace crucible::rollout {

using bytes = std::vector<std::uint8_t>;

struct candidate_fields {
  std::string candidate_id, task_id, code, rollout, group_id;
  std::uint64_t policy_version = 0;
};
bytes candidate_envelope(const candidate_fields& c, const std::string& sender);

bytes exemplar_query_envelope(const std::string& task_id, std::uint32_t n, double temperature, std::uint64_t seed,
                              const std::string& sender);

// What an ExemplarAnswer holds; corrupt when the bytes are not one, and the
// store's error (unavailable) when it failed.
result<std::vector<prompt_exemplar>> exemplars_from(const bytes& answer);

// One settled sample of a group.
struct settled_sample {
  std::string candidate_id;
  std::vector<std::int32_t> prompt_ids, completion_ids;
  std::vector<float> behaviour_logprobs;
  double reward = 0;
  msg::SettlementStatus settlement = msg::SettlementStatus::Failure;
};

// A RolloutGroup made at `policy_version` (every token of it: a rollout
// switches weights only between groups).
// `number` is the rollout's own number for the group (its learner.start's).
bytes group_envelope(const std::string& group_id, std::uint64_t number, const std::string& task_id,
                     const std::string& rollout, std::uint64_t policy_version,
                     const std::vector<settled_sample>& samples, const std::string& sender);

// The reward and status of a Settlement; corrupt when the bytes are not one
// or it names another candidate.
struct settlement_outcome {
  double reward = 0;
  msg::SettlementStatus status = msg::SettlementStatus::Failure;
  std::string reason;
};
result<settlement_outcome> settlement_from(const bytes& settlement, const std::string& candidate_id);

}  // namespace crucible::rollout
