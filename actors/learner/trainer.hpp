// The learner's training machinery: owns the trainable policy, the frozen
// reference, AdamW, the learning-rate schedule, the reward window and the
// counters, and turns one batch into one policy version:
//
//   train_grpo:      stage 3 (reward smoothing, group advantages, clipped
//                    ratio against the proximal policy, truncated behaviour
//                    weight, beta * k3 KL; the proximal log-probabilities
//                    recomputed where a batch takes several optimizer steps
//                    or LoRA dropout, else the trained forward's, detached)
//   train_reinforce: stage 2 (successes only, reward 1, no baseline)
//   train_sft:       stage 1 (negative log-likelihood of completions)
//
// Each call splits the batch into mini_batches optimizer steps, each into
// micro_batches gradient-accumulation slices, and, with a collective, into
// this rank's share (every rank is given the same batch; see collective).
// Gradients are clipped to max_grad_norm; on CUDA with fp32 weights the
// forward runs under bf16 autocast when bf16_autocast is set. With
// zero_stage 2 and a collective of several ranks, AdamW's state and the
// summed gradients are sharded across the ranks (zero_optimizer.hpp).
//
// Called from one thread (the learner role's actor, or a test). Includes
// LibTorch: only the learner's own files include it.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "actors/learner/admission.hpp"
#include "actors/learner/learner_options.hpp"
#include "actors/learner/reward_window.hpp"
#include "actors/learner/rollout_batch.hpp"
#include "actors/learner/step_report.hpp"
#include "actors/policy/causal_lm.hpp"
#include "runtime/base/result.hpp"

namespace crucible::learner {

class zero_optimizer;  // zero_optimizer.hpp
struct zero_state;

// A group of data-parallel ranks (distributed.hpp gives one over LibTorch's
// c10d). Every rank is handed the same batch and computes gradients on its
// share of the samples (sample i goes to rank i % world_size); the trainer
// sums gradients and statistics across ranks with all_reduce_sum, so that
// every rank takes the same optimizer step as one process on the whole batch.
class collective {
 public:
  virtual ~collective() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  // Sums each tensor across ranks, in place. Errors as values (io, internal).
  virtual status all_reduce_sum(std::vector<torch::Tensor>& tensors) = 0;
  // ZeRO's two collectives (zero_optimizer.hpp). reduce_scatter_sum: `flat`
  // (1-D, world_size * k elements, the same length on every rank) summed
  // across ranks; this rank's k-element slice [rank * k, (rank + 1) * k)
  // of the sum is returned. all_gather: every rank's k-element `shard`, in
  // rank order, as one 1-D tensor of world_size * k elements. Both on the
  // device and dtype of their input. Errors as all_reduce_sum.
  virtual result<torch::Tensor> reduce_scatter_sum(const torch::Tensor& flat) = 0;
  virtual result<torch::Tensor> all_gather(const torch::Tensor& shard) = 0;
};

class trainer {
 public:
  // Takes the policy to train (parameters must require grad) and the frozen
  // reference (may be null when kl_beta is 0; when kl_beta > 0 and it is
  // null, a frozen copy of the policy is made). With options.lora enabled
  // (or adapters already attached to `model`: a resumed or copied policy)
  // the base is frozen and only the adapters are trained, and a null
  // reference is the base without adapters (no copy). Seeds LibTorch's RNGs with
  // options.seed. invalid_argument for options validate() refuses or a
  // reference of another architecture. `dp` may be null (one process); it
  // must outlive the trainer.
  static result<std::unique_ptr<trainer>> create(std::shared_ptr<policy::causal_lm> model,
                                                 std::shared_ptr<policy::causal_lm> reference,
                                                 const learner_options& options, collective* dp = nullptr);

  // One batch of rollout groups -> one new version. invalid_argument for an
  // empty batch, a group without samples, behaviour log-probs or token
  // versions whose count differs from the completion's, or token ids outside
  // the vocabulary; unavailable when a group is not admitted (too stale,
  // admission.hpp); internal when LibTorch fails.
  result<step_report> train_grpo(const std::vector<rollout_group>& batch);
  // Stage 2 on the successes (reward > 0) of `batch`. A batch without a
  // success changes nothing and reports sequences = 0. Errors as train_grpo.
  result<step_report> train_reinforce(const std::vector<rollout_group>& batch);
  // Stage 1. invalid_argument for an empty batch, an empty completion or ids
  // outside the vocabulary; internal when LibTorch fails.
  result<step_report> train_sft(const std::vector<sft_example>& batch);

  // Checkpoints (trainer_checkpoint.cpp). save_checkpoint writes
  // `dir`/step-N (policy and reference weights in Hugging Face layout, or
  // under LoRA the adapters alone as a PEFT folder step-N/adapter,
  // optimizer state, RNG states, counters, reward window) through a
  // temporary folder renamed into place, then points `dir`/latest at it, so
  // a kill -9 at any moment leaves the previous checkpoint usable. Every
  // rank calls it; only rank 0 writes (under zero_stage 2 the ranks first
  // gather AdamW's state, which goes to optimizer-zero.pt whole, and every
  // rank returns once it is in place, with rank 0's error if it failed).
  // io (naming the file and the OS's reason, e.g. "No space left on
  // device") or internal; a failed save removes its temporary folder and
  // leaves `latest` and the checkpoint it names as they were.
  status save_checkpoint(const std::filesystem::path& dir) const;
  // Restores the state of the checkpoint `dir`/latest names into this
  // trainer (built on a policy of the same architecture, e.g. loaded from
  // latest_checkpoint_weights(dir)). not_found when there is none; corrupt
  // for a checkpoint that does not match the model.
  status load_checkpoint(const std::filesystem::path& dir);

  std::uint64_t version() const { return version_; }
  std::uint64_t optimizer_steps() const { return optimizer_steps_; }
  const reward_window& rewards() const { return rewards_; }
  staleness_gate& gate() { return gate_; }
  const learner_options& options() const { return options_; }
  policy::causal_lm& model() { return *model_; }
  const std::shared_ptr<policy::causal_lm>& model_ptr() const { return model_; }

  ~trainer();

 private:
  // save_checkpoint's files; `sharded`: AdamW's state gathered under zero_stage 2, else null.
  status write_checkpoint(const std::filesystem::path& tmp, const zero_state* sharded) const;
  // Writes them into a temporary folder, renames it into place and points `latest` at it.
  status place_checkpoint(const std::filesystem::path& dir, const zero_state* sharded) const;
  // What the optimizer trains: the adapters' parameters under LoRA, else the policy's.
  std::vector<torch::Tensor> trainable() const;
  struct prepared;  // a sample ready for the network (trainer.cpp)
  trainer(std::shared_ptr<policy::causal_lm> model, std::shared_ptr<policy::causal_lm> reference,
          const learner_options& options, collective* dp);
  // Checks and admits every group, fills report's staleness and reward_mean;
  // the batch's rewards in order.
  result<std::vector<double>> admit_batch(const std::vector<rollout_group>& batch, step_report& report) const;
  result<step_report> run_batch(std::vector<prepared> samples, step_report report);
  bool sharded() const;  // zero_stage 2 over a collective of more than one rank
  torch::optim::AdamWOptions adamw_options() const;
  void zero_grad();
  void kept_bytes(step_report& report) const;  // fills gradient_bytes and optimizer_state_bytes

  std::shared_ptr<policy::causal_lm> model_;
  std::shared_ptr<policy::causal_lm> reference_;
  bool base_reference_ = false;  // LoRA with kl_beta > 0: the reference is model_ under base_only_scope
  learner_options options_;
  collective* dp_;
  std::unique_ptr<torch::optim::AdamW> optimizer_;  // null under zero_stage 2, which steps zero_ instead
  std::unique_ptr<zero_optimizer> zero_;            // zero_stage 2 with more than one rank, else null
  reward_window rewards_;
  staleness_gate gate_;
  std::uint64_t version_ = 0;
  std::uint64_t optimizer_steps_ = 0;
};

// A frozen copy of `model` (same device and dtype, no gradients): the
// reference policy, or an older policy for tests of stale rollouts.
std::shared_ptr<policy::causal_lm> frozen_copy(const policy::causal_lm& model);

// Copies every parameter of `from` into `to` (same architecture).
void copy_weights(const policy::causal_lm& from, policy::causal_lm& to);

// Fresh weights for a network built from a config (as transformers'
// initialisation: normal(0, 0.02) matrices, unit norms, zero biases), drawn
// from a generator seeded with `seed`. Tests and `crucible learner --init`
// use it to train a model from scratch.
void initialise_weights(policy::causal_lm& model, std::uint64_t seed);

// The folder holding the policy weights of the latest checkpoint under
// `dir` (step-N/policy, or step-N/adapter, a PEFT folder, under LoRA);
// not_found when there is none.
result<std::filesystem::path> latest_checkpoint_weights(const std::filesystem::path& dir);

}  // namespace crucible::learner
