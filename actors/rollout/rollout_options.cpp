#include "actors/rollout/rollout_options.hpp"

#include <fmt/format.h>

namespace crucible::rollout {

status read(config::section s, rollout_options& o) {
  CRUCIBLE_TRY(s.read("model", o.model));
  CRUCIBLE_TRY(s.read("device", o.device));
  CRUCIBLE_TRY(s.read("policy_version", o.policy_version));
  CRUCIBLE_TRY(s.read("tasks_dir", o.tasks_dir));
  CRUCIBLE_TRY(s.read("tasks", o.tasks));
  CRUCIBLE_TRY(s.read("schedule", o.schedule));
  CRUCIBLE_TRY(s.read("prompt_template", o.prompt_template));
  CRUCIBLE_TRY(s.read("platform", o.platform));
  CRUCIBLE_TRY(s.read("chat_template", o.chat_template));
  CRUCIBLE_TRY(s.read("system_prompt", o.system_prompt));
  CRUCIBLE_TRY(s.read("exemplars", o.exemplars));
  CRUCIBLE_TRY(s.read("exemplar_temperature", o.exemplar_temperature));
  CRUCIBLE_TRY(s.read("exemplar_deadline_ms", o.exemplar_deadline));
  CRUCIBLE_TRY(s.read("group_size", o.group_size));
  CRUCIBLE_TRY(s.read("max_new_tokens", o.max_new_tokens));
  CRUCIBLE_TRY(s.read("temperature", o.temperature));
  CRUCIBLE_TRY(s.read("top_p", o.top_p));
  CRUCIBLE_TRY(s.read("top_k", o.top_k));
  CRUCIBLE_TRY(s.read("seed", o.seed));
  CRUCIBLE_TRY(s.read("batch_groups", o.batch_groups));
  CRUCIBLE_TRY(s.read("slots", o.slots));
  CRUCIBLE_TRY(s.read("max_staleness", o.max_staleness));
  CRUCIBLE_TRY(s.read("learner_admission", o.learner_admission));
  CRUCIBLE_TRY(s.read("max_pending_groups", o.max_pending_groups));
  CRUCIBLE_TRY(s.read("settle_deadline_ms", o.settle_deadline));
  CRUCIBLE_TRY(s.read("learner_job_kind", o.learner_job_kind));
  CRUCIBLE_TRY(s.read("groups", o.groups));
  CRUCIBLE_TRY(s.read("state_file", o.state_file));
  CRUCIBLE_TRY(s.read("weights_dir", o.weights_dir));
  auto bad = [](const std::string& what) { return make_error(errc::invalid_argument, "[rollout] " + what); };
  if (o.schedule != "round_robin" && o.schedule != "weighted")
    return bad("schedule must be \"round_robin\" or \"weighted\", got \"" + o.schedule + "\"");
  if (o.group_size == 0) return bad("group_size must be at least 1");
  if (o.max_new_tokens == 0) return bad("max_new_tokens must be at least 1");
  if (o.batch_groups == 0) return bad("batch_groups must be at least 1");
  if (!(o.temperature > 0)) return bad("temperature must be positive");
  if (!(o.top_p > 0 && o.top_p <= 1)) return bad("top_p must be in (0, 1]");
  if (o.max_pending_groups == 0) return bad("max_pending_groups must be at least 1");
  if (o.tasks.empty()) return bad("tasks must name at least one task");
  if (o.learner_job_kind.empty()) return bad("learner_job_kind must not be empty");
  return s.finish();
}

std::string describe(const rollout_options& o) {
  return fmt::format("G={}, {} exemplars, max_new_tokens {}, temperature {:.2f}, max_staleness {}, {} over {} "
                     "task entries, learner jobs '{}', {} group(s) a call{}",
                     o.group_size, o.exemplars, o.max_new_tokens, o.temperature, o.max_staleness, o.schedule,
                     o.tasks.size(), o.learner_job_kind, o.batch_groups,
                     o.slots ? fmt::format(" on {} slots", o.slots) : std::string());
}

}  // namespace crucible::rollout
