#include "actors/referee/referee_wire.hpp"

#include <cmath>

namespace crucible::referee {

using messages::str;

namespace {
flatbuffers::Offset<flatbuffers::String> copy(flatbuffers::FlatBufferBuilder& fbb, const flatbuffers::String* s) {
  return s ? fbb.CreateString(s->c_str(), s->size()) : 0;
}
}  // namespace

flatbuffers::Offset<msg::Candidate> copy_candidate(flatbuffers::FlatBufferBuilder& fbb, const msg::Candidate& c) {
  auto id = copy(fbb, c.candidate_id()), task = copy(fbb, c.task_id()), code = copy(fbb, c.code());
  auto rollout = copy(fbb, c.rollout()), group = copy(fbb, c.group_id()), hash = copy(fbb, c.source_hash());
  return msg::CreateCandidate(fbb, id, task, code, c.policy_version(), rollout, group, hash);
}

flatbuffers::Offset<msg::Measurement> copy_measurement(flatbuffers::FlatBufferBuilder& fbb,
                                                       const msg::Measurement& m) {
  auto id = copy(fbb, m.candidate_id()), task = copy(fbb, m.task_id()), reason = copy(fbb, m.reason());
  auto means = m.bucket_means() ? fbb.CreateVector(m.bucket_means()->data(), m.bucket_means()->size()) : 0;
  auto device = copy(fbb, m.device()), model = copy(fbb, m.device_model()), evaluator = copy(fbb, m.evaluator());
  flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>> fired = 0;
  if (m.defences_fired()) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> v;
    for (auto s : *m.defences_fired()) v.push_back(copy(fbb, s));
    fired = fbb.CreateVector(v);
  }
  return msg::CreateMeasurement(fbb, id, task, m.status(), reason, m.speedup_raw(), m.reward(), means,
                                m.bucket_variance(), m.rounds(), m.correctness_trials(), m.ref_us(), m.cand_us(),
                                device, model, evaluator, m.duration_s(), m.seed(), fired, m.verify(), m.clocks_mhz(),
                                m.temperature_c());
}

bytes settlement_envelope(const msg::Candidate& c, const settlement_fields& s, const std::string& sender) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  auto id = copy(fbb, c.candidate_id()), task = copy(fbb, c.task_id()), group = copy(fbb, c.group_id());
  auto reason = fbb.CreateString(s.reason);
  // The code travels only with clean successes (for the exemplar store).
  auto code = s.status == msg::SettlementStatus::Success ? copy(fbb, c.code()) : 0;
  auto st = msg::CreateSettlement(fbb, id, task, group, s.status, s.reward, s.speedup_raw, s.verified, reason, code,
                                  c.policy_version(), s.settled_ns);
  return w.finish(st, sender, str(c.candidate_id()));
}

bytes detect_request_envelope(const msg::Candidate& c, const msg::Measurement& m, const msg::Measurement* verification,
                              const std::string& sender) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  auto cand = copy_candidate(fbb, c);
  auto meas = copy_measurement(fbb, m);
  auto ver = verification ? copy_measurement(fbb, *verification) : 0;
  auto req = msg::CreateDetectRequest(fbb, cand, meas, ver);
  return w.finish(req, sender, str(c.candidate_id()));
}

bytes candidate_envelope(const std::string& candidate_id, const std::string& task_id, const std::string& code,
                         const std::string& sender) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  auto c = msg::CreateCandidate(fbb, fbb.CreateString(candidate_id), fbb.CreateString(task_id),
                                fbb.CreateString(code));
  return w.finish(c, sender, candidate_id);
}

bytes simple_measurement(const std::string& candidate_id, const std::string& task_id, msg::EvalStatus status,
                         double speedup, const std::string& evaluator, const std::string& device_model, bool verify) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  bool ok = status == msg::EvalStatus::Ok;
  auto m = msg::CreateMeasurement(fbb, fbb.CreateString(candidate_id), fbb.CreateString(task_id), status,
                                  fbb.CreateString(ok ? "" : "it failed"), speedup,
                                  ok ? std::floor(speedup * 100) / 100 : 0, 0, 0, 100, 8, 1, 1,
                                  fbb.CreateString(device_model), fbb.CreateString(device_model),
                                  fbb.CreateString(evaluator), 1, 1, 0, verify);
  return w.finish(m, evaluator, candidate_id);
}

}  // namespace crucible::referee
