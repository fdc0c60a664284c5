#include "actors/learner/learner_config.hpp"

#include <string>

namespace crucible::learner {

std::string_view to_string(stage s) {
  switch (s) {
    case stage::sft: return "sft";
    case stage::reinforce: return "reinforce";
    case stage::grpo: return "grpo";
  }
  return "?";
}

std::string_view to_string(aggregation a) {
  return a == aggregation::token_mean ? "token_mean" : "sequence_mean";
}

namespace {

error bad(const std::string& key, const std::string& why) {
  return make_error(errc::invalid_argument, "[learner] " + key + ": " + why);
}

}  // namespace

status validate(const learner_options& o) {
  if (o.reward_window == 0) return bad("reward_window", "must be at least 1");
  if (!(o.reward_clip > 0)) return bad("reward_clip", "must be positive");
  if (!(o.clip_eps_low >= 0 && o.clip_eps_low < 1)) return bad("clip_eps_low", "must be in [0, 1)");
  if (!(o.clip_eps_high >= 0)) return bad("clip_eps_high", "must not be negative");
  if (!(o.kl_beta >= 0)) return bad("kl_beta", "must not be negative");
  if (!(o.behaviour_weight_cap >= 0)) return bad("behaviour_weight_cap", "must not be negative (0 = no cap)");
  if (!(o.temperature > 0)) return bad("temperature", "must be positive");
  if (!(o.learning_rate > 0)) return bad("learning_rate", "must be positive");
  if (!(o.weight_decay >= 0)) return bad("weight_decay", "must not be negative");
  if (!(o.adam_beta1 >= 0 && o.adam_beta1 < 1)) return bad("adam_beta1", "must be in [0, 1)");
  if (!(o.adam_beta2 >= 0 && o.adam_beta2 < 1)) return bad("adam_beta2", "must be in [0, 1)");
  if (!(o.adam_eps > 0)) return bad("adam_eps", "must be positive");
  if (!(o.max_grad_norm >= 0)) return bad("max_grad_norm", "must not be negative (0 = no clipping)");
  if (!(o.min_lr_ratio >= 0 && o.min_lr_ratio <= 1)) return bad("min_lr_ratio", "must be in [0, 1]");
  if (o.total_steps != 0 && o.total_steps < o.warmup_steps)
    return bad("total_steps", "must be 0 or at least warmup_steps");
  if (o.groups_per_batch == 0) return bad("groups_per_batch", "must be at least 1");
  if (o.mini_batches == 0 || o.groups_per_batch % o.mini_batches != 0)
    return bad("mini_batches", "must be at least 1 and divide groups_per_batch");
  if (o.micro_batches == 0 || (o.groups_per_batch / o.mini_batches) % o.micro_batches != 0)
    return bad("micro_batches", "must be at least 1 and divide groups_per_batch / mini_batches");
  if (o.zero_stage != 0 && o.zero_stage != 2)
    return bad("zero_stage", "must be 0 (every rank keeps all optimizer state) or 2 (optimizer state and gradients "
                             "sharded across data-parallel ranks)");
  if (o.publish_chunk_bytes == 0) return bad("publish_chunk_bytes", "must be at least 1");
  CRUCIBLE_TRY(policy::validate(o.lora, "[learner] lora_"));
  return status::success();
}

}  // namespace crucible::learner

namespace crucible::config {

status read(section s, learner::learner_options& out) {
  using namespace learner;
  std::string objective(to_string(out.objective)), mode(to_string(out.loss_aggregation));
  CRUCIBLE_TRY(s.read("objective", objective));
  if (objective == "sft") out.objective = stage::sft;
  else if (objective == "reinforce") out.objective = stage::reinforce;
  else if (objective == "grpo") out.objective = stage::grpo;
  else return make_error(errc::invalid_argument, "[learner] objective: \"" + objective + "\" is not sft, reinforce or grpo");
  CRUCIBLE_TRY(s.read("loss_aggregation", mode));
  if (mode == "sequence_mean") out.loss_aggregation = aggregation::sequence_mean;
  else if (mode == "token_mean") out.loss_aggregation = aggregation::token_mean;
  else return make_error(errc::invalid_argument, "[learner] loss_aggregation: \"" + mode + "\" is not sequence_mean or token_mean");
  CRUCIBLE_TRY(s.read("reward_window", out.reward_window));
  CRUCIBLE_TRY(s.read("reward_clip", out.reward_clip));
  CRUCIBLE_TRY(s.read("clip_eps_low", out.clip_eps_low));
  CRUCIBLE_TRY(s.read("clip_eps_high", out.clip_eps_high));
  CRUCIBLE_TRY(s.read("kl_beta", out.kl_beta));
  CRUCIBLE_TRY(s.read("behaviour_weight_cap", out.behaviour_weight_cap));
  CRUCIBLE_TRY(s.read("max_staleness", out.max_staleness));
  CRUCIBLE_TRY(s.read("temperature", out.temperature));
  CRUCIBLE_TRY(s.read("learning_rate", out.learning_rate));
  CRUCIBLE_TRY(s.read("weight_decay", out.weight_decay));
  CRUCIBLE_TRY(s.read("adam_beta1", out.adam_beta1));
  CRUCIBLE_TRY(s.read("adam_beta2", out.adam_beta2));
  CRUCIBLE_TRY(s.read("adam_eps", out.adam_eps));
  CRUCIBLE_TRY(s.read("max_grad_norm", out.max_grad_norm));
  CRUCIBLE_TRY(s.read("warmup_steps", out.warmup_steps));
  CRUCIBLE_TRY(s.read("total_steps", out.total_steps));
  CRUCIBLE_TRY(s.read("min_lr_ratio", out.min_lr_ratio));
  CRUCIBLE_TRY(s.read("groups_per_batch", out.groups_per_batch));
  CRUCIBLE_TRY(s.read("mini_batches", out.mini_batches));
  CRUCIBLE_TRY(s.read("micro_batches", out.micro_batches));
  CRUCIBLE_TRY(s.read("bf16_autocast", out.bf16_autocast));
  CRUCIBLE_TRY(s.read("zero_stage", out.zero_stage));
  CRUCIBLE_TRY(s.read("activation_checkpointing", out.activation_checkpointing));
  CRUCIBLE_TRY(s.read("seed", out.seed));
  CRUCIBLE_TRY(s.read("lora_rank", out.lora.rank));
  CRUCIBLE_TRY(s.read("lora_alpha", out.lora.alpha));
  CRUCIBLE_TRY(s.read("lora_dropout", out.lora.dropout));
  CRUCIBLE_TRY(s.read("lora_targets", out.lora.targets));
  CRUCIBLE_TRY(s.read("policy", out.policy));
  CRUCIBLE_TRY(s.read("reference", out.reference));
  CRUCIBLE_TRY(s.read("device", out.device));
  CRUCIBLE_TRY(s.read("sft_data", out.sft_data));
  CRUCIBLE_TRY(s.read("checkpoint_dir", out.checkpoint_dir));
  CRUCIBLE_TRY(s.read("checkpoint_every", out.checkpoint_every));
  CRUCIBLE_TRY(s.read("publish_dir", out.publish_dir));
  CRUCIBLE_TRY(s.read("publish_chunk_bytes", out.publish_chunk_bytes));
  CRUCIBLE_TRY(s.read("metrics_file", out.metrics_file));
  CRUCIBLE_TRY(learner::validate(out));
  return s.finish();
}

}  // namespace crucible::config
