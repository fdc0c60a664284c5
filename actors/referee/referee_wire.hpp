// The referee's messages on the wire (messages/domain.fbs is the contract):
// building Settlement and DetectRequest envelopes, and copying a received
// Candidate or Measurement into a new message. Pure functions; any thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <flatbuffers/flatbuffers.h>

#include "messages/codec.hpp"

namespace crucible::referee {

using bytes = std::vector<std::uint8_t>;

flatbuffers::Offset<msg::Candidate> copy_candidate(flatbuffers::FlatBufferBuilder& fbb, const msg::Candidate& c);
flatbuffers::Offset<msg::Measurement> copy_measurement(flatbuffers::FlatBufferBuilder& fbb, const msg::Measurement& m);

// What a settlement says; candidate fields come from the Candidate.
struct settlement_fields {
  msg::SettlementStatus status = msg::SettlementStatus::Failure;
  double reward = 0, speedup_raw = 0;
  bool verified = false;
  std::string reason;
  std::int64_t settled_ns = 0;
};
bytes settlement_envelope(const msg::Candidate& c, const settlement_fields& s, const std::string& sender);

// The payload of a detect:NAME job. verification may be null.
bytes detect_request_envelope(const msg::Candidate& c, const msg::Measurement& m, const msg::Measurement* verification,
                              const std::string& sender);

// A Candidate envelope (the settle job's payload; also used by `crucible run` and tests).
bytes candidate_envelope(const std::string& candidate_id, const std::string& task_id, const std::string& code,
                         const std::string& sender);

// A Measurement envelope with these figures and zeros elsewhere (reward:
// speedup rounded down to 2 decimals when Ok, else 0): what the referee's
// tests, its benchmark and their stand-in evaluators answer with.
bytes simple_measurement(const std::string& candidate_id, const std::string& task_id, msg::EvalStatus status,
                         double speedup, const std::string& evaluator, const std::string& device_model,
                         bool verify = false);

// The payload of a verified envelope as T, or null when bytes do not verify
// or hold another kind. The envelope view points into data.
template <class T>
const T* payload_of(const bytes& data) {
  auto env = messages::open(data);
  if (!env) return nullptr;
  return (*env)->template payload_as<T>();
}

}  // namespace crucible::referee
