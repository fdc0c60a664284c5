#include "actors/rollout/rollout_wire.hpp"

#include "messages/domain_generated.h"

namespace crucible::rollout {

using messages::str;

bytes candidate_envelope(const candidate_fields& c, const std::string& sender) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  auto off = msg::CreateCandidate(fbb, fbb.CreateString(c.candidate_id), fbb.CreateString(c.task_id),
                                  fbb.CreateString(c.code), c.policy_version, fbb.CreateString(c.rollout),
                                  fbb.CreateString(c.group_id));
  return w.finish(off, sender, c.candidate_id);
}

bytes exemplar_query_envelope(const std::string& task_id, std::uint32_t n, double temperature, std::uint64_t seed,
                              const std::string& sender) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  return w.finish(msg::CreateExemplarQuery(fbb, fbb.CreateString(task_id), n, temperature, seed), sender, task_id);
}

result<std::vector<prompt_exemplar>> exemplars_from(const bytes& answer) {
  auto env = messages::open(answer);
  auto* a = env ? (*env)->payload_as_ExemplarAnswer() : nullptr;
  if (!a) return make_error(errc::corrupt, "an exemplar.sample result is not an ExemplarAnswer");
  if (!str(a->error()).empty())
    return make_error(errc::unavailable, "the exemplar store failed: " + std::string(str(a->error())));
  std::vector<prompt_exemplar> out;
  if (a->exemplars())
    for (const auto* e : *a->exemplars()) out.push_back({std::string(str(e->code())), e->score(), e->bucket()});
  return out;
}

bytes group_envelope(const std::string& group_id, std::uint64_t number, const std::string& task_id,
                     const std::string& rollout, std::uint64_t policy_version,
                     const std::vector<settled_sample>& samples, const std::string& sender) {
  messages::envelope_writer w(4096);
  auto& fbb = w.fbb();
  std::vector<flatbuffers::Offset<msg::Sample>> offs;
  for (const auto& s : samples)
    offs.push_back(msg::CreateSample(fbb, fbb.CreateString(s.candidate_id), fbb.CreateVector(s.prompt_ids),
                                     fbb.CreateVector(s.completion_ids), fbb.CreateVector(s.behaviour_logprobs),
                                     s.reward, s.settlement));
  auto g = msg::CreateRolloutGroup(fbb, fbb.CreateString(group_id), fbb.CreateString(task_id),
                                   fbb.CreateString(rollout), policy_version, fbb.CreateVector(offs), number);
  return w.finish(g, sender, group_id);
}

result<settlement_outcome> settlement_from(const bytes& data, const std::string& candidate_id) {
  auto env = messages::open(data);
  auto* s = env ? (*env)->payload_as_Settlement() : nullptr;
  if (!s) return make_error(errc::corrupt, "the settle result of " + candidate_id + " is not a Settlement");
  if (str(s->candidate_id()) != candidate_id)
    return make_error(errc::corrupt, "the settle result of " + candidate_id + " settles '" +
                                         std::string(str(s->candidate_id())) + "'");
  return settlement_outcome{s->reward(), s->status(), std::string(str(s->reason()))};
}

}  // namespace crucible::rollout
