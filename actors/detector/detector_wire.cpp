#include "actors/detector/detector_wire.hpp"

#include <fmt/format.h>

namespace crucible::detector {

using messages::str;

const char* to_string(verdict_kind k) {
  switch (k) {
    case verdict_kind::clean: return "clean";
    case verdict_kind::hack: return "hack";
    case verdict_kind::unsure: return "unsure";
  }
  return "unknown";
}

std::string describe(const verdict& v) {
  return fmt::format("{} ({:.2f}): {}", to_string(v.kind), v.confidence, v.reason);
}

detect_input input_from(const msg::DetectRequest& r) {
  detect_input in;
  if (auto* c = r.candidate()) {
    in.candidate_id = str(c->candidate_id());
    in.task_id = str(c->task_id());
    in.code = str(c->code());
  }
  if (auto* m = r.measurement()) {
    in.measured = true;
    in.measured_ok = m->status() == msg::EvalStatus::Ok;
    in.speedup = m->speedup_raw();
    in.reward = m->reward();
    if (in.candidate_id.empty()) in.candidate_id = str(m->candidate_id());
    if (in.task_id.empty()) in.task_id = str(m->task_id());
    if (auto* d = m->defences_fired())
      for (auto s : *d) in.defences_fired.emplace_back(str(s));
  }
  if (auto* v = r.verification()) in.verified_speedup = v->speedup_raw();
  return in;
}

messages::bytes encode_verdict(const verdict& v, std::string_view sender) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  auto out = msg::CreateVerdict(fbb, fbb.CreateString(v.candidate_id), fbb.CreateString(v.detector),
                                static_cast<msg::VerdictKind>(v.kind), fbb.CreateString(v.reason), v.required,
                                v.confidence);
  return w.finish(out, sender, v.candidate_id);
}

messages::bytes encode_request(const detect_input& in, std::string_view sender) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  auto id = fbb.CreateString(in.candidate_id);
  auto task = fbb.CreateString(in.task_id);
  auto candidate = msg::CreateCandidate(fbb, id, task, fbb.CreateString(in.code));
  flatbuffers::Offset<msg::Measurement> measurement, verification;
  if (in.measured) {
    std::vector<flatbuffers::Offset<flatbuffers::String>> fired;
    for (auto& d : in.defences_fired) fired.push_back(fbb.CreateString(d));
    auto fired_vec = fbb.CreateVector(fired);
    msg::MeasurementBuilder b(fbb);
    b.add_candidate_id(id);
    b.add_task_id(task);
    b.add_status(in.measured_ok ? msg::EvalStatus::Ok : msg::EvalStatus::Incorrect);
    b.add_speedup_raw(in.speedup);
    b.add_reward(in.reward);
    b.add_defences_fired(fired_vec);
    measurement = b.Finish();
  }
  if (in.verified_speedup) {
    msg::MeasurementBuilder b(fbb);
    b.add_candidate_id(id);
    b.add_task_id(task);
    b.add_status(msg::EvalStatus::Ok);
    b.add_speedup_raw(*in.verified_speedup);
    b.add_verify(true);
    verification = b.Finish();
  }
  auto req = msg::CreateDetectRequest(fbb, candidate, measurement, verification);
  return w.finish(req, sender, in.candidate_id);
}

std::string detect_job_id(std::string_view candidate_id, std::string_view detector) {
  return fmt::format("detect/{}/{}", candidate_id, detector);
}
std::string detect_job_kind(std::string_view detector) { return fmt::format("detect:{}", detector); }

}  // namespace crucible::detector
