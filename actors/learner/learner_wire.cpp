#include "actors/learner/learner_wire.hpp"

#include <charconv>

namespace crucible::learner {

namespace {

template <class T>
std::vector<T> vector_of(const flatbuffers::Vector<T>* v) {
  return v ? std::vector<T>(v->begin(), v->end()) : std::vector<T>();
}

}  // namespace

result<rollout_group> group_from(const msg::RolloutGroup& wire) {
  rollout_group g;
  g.group_id = std::string(messages::str(wire.group_id()));
  g.task_id = std::string(messages::str(wire.task_id()));
  g.rollout = std::string(messages::str(wire.rollout()));
  g.number = wire.number();
  g.policy_version = wire.policy_version();
  if (!wire.samples() || wire.samples()->size() == 0)
    return make_error(errc::invalid_argument, "RolloutGroup " + g.group_id + ": no samples");
  for (flatbuffers::uoffset_t i = 0; i < wire.samples()->size(); ++i) {
    const auto* s = wire.samples()->Get(i);
    const std::string where = "RolloutGroup " + g.group_id + " sample " + std::to_string(i);
    rollout_sample out;
    out.prompt_ids = vector_of(s->prompt_tokens());
    out.completion_ids = vector_of(s->completion_tokens());
    out.behaviour_logprobs = vector_of(s->behaviour_logprobs());
    auto versions = messages::scalars_of(s->token_policy_versions(), where + ": token_policy_versions");
    if (!versions) return versions.error();
    out.token_versions = std::move(*versions);
    out.reward = s->reward();
    if (out.prompt_ids.empty()) return make_error(errc::invalid_argument, where + ": no prompt tokens");
    if (out.behaviour_logprobs.size() != out.completion_ids.size())
      return make_error(errc::invalid_argument, where + ": " + std::to_string(out.behaviour_logprobs.size()) +
                                                    " behaviour log-probs for " +
                                                    std::to_string(out.completion_ids.size()) + " completion tokens");
    if (!out.token_versions.empty() && out.token_versions.size() != out.completion_ids.size())
      return make_error(errc::invalid_argument, where + ": " + std::to_string(out.token_versions.size()) +
                                                    " token versions for " +
                                                    std::to_string(out.completion_ids.size()) + " completion tokens");
    g.samples.push_back(std::move(out));
  }
  return g;
}

flatbuffers::Offset<msg::RolloutGroup> build_group(flatbuffers::FlatBufferBuilder& fbb, const rollout_group& group,
                                                   std::string_view rollout) {
  std::vector<flatbuffers::Offset<msg::Sample>> samples;
  for (const auto& s : group.samples) {
    samples.push_back(msg::CreateSample(fbb, 0, fbb.CreateVector(s.prompt_ids), fbb.CreateVector(s.completion_ids),
                                        fbb.CreateVector(s.behaviour_logprobs), s.reward,
                                        s.reward > 0 ? msg::SettlementStatus::Success : msg::SettlementStatus::Failure,
                                        fbb.CreateVector(s.token_versions)));
  }
  return msg::CreateRolloutGroup(fbb, fbb.CreateString(group.group_id), fbb.CreateString(group.task_id),
                                 fbb.CreateString(rollout), group.policy_version, fbb.CreateVector(samples),
                                 group.number);
}

namespace {
constexpr std::string_view trained_prefix = "trained in version ";
constexpr std::string_view stale_prefix = "stale: ";
}  // namespace

std::string stale_refusal(std::string_view reason) { return std::string(stale_prefix) + std::string(reason); }
bool is_stale_refusal(std::string_view text) { return text.substr(0, stale_prefix.size()) == stale_prefix; }

std::string trained_text(std::uint64_t version) { return std::string(trained_prefix) + std::to_string(version); }

std::string start_text(const start_request& s) {
  return std::to_string(s.version) + " " + std::to_string(s.number) + " " + s.rollout;
}

result<start_request> start_from(std::string_view text) {
  start_request out;
  const std::string_view all = text;
  auto number = [&](const char* what, std::uint64_t& v) -> status {
    const auto space = text.find(' ');
    const auto word = text.substr(0, space);
    auto [end, ec] = std::from_chars(word.data(), word.data() + word.size(), v);
    if (word.empty() || ec != std::errc() || end != word.data() + word.size())
      return make_error(errc::invalid_argument, "learner.start \"" + std::string(all.substr(0, 80)) + "\": " + what +
                                                    " is not a number (\"VERSION NUMBER ROLLOUT\")");
    text.remove_prefix(space == std::string_view::npos ? text.size() : space + 1);
    return status::success();
  };
  CRUCIBLE_TRY(number("the rollout's version", out.version));
  CRUCIBLE_TRY(number("the group's number", out.number));
  if (text.empty())
    return make_error(errc::invalid_argument, "learner.start \"" + std::string(all.substr(0, 80)) +
                                                  "\": no rollout name (\"VERSION NUMBER ROLLOUT\")");
  out.rollout = std::string(text);
  return out;
}

std::optional<std::uint64_t> trained_version(std::string_view text) {
  if (text.substr(0, trained_prefix.size()) != trained_prefix) return std::nullopt;
  text.remove_prefix(trained_prefix.size());
  std::uint64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return v;
}

}  // namespace crucible::learner
