// Everything a rollout can be told, with its default. `[rollout]` in a TOML
// config maps onto this struct (read() below); docs/configuration.md lists
// every key. Read by `crucible rollout`; the rollout actor takes it whole.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/base/result.hpp"
#include "runtime/config/config_file.hpp"

namespace crucible::rollout {

struct rollout_options {
  // ---- policy
  std::string model;            // Hugging Face folder of the policy; required (or --model)
  std::string device = "cpu";   // "cpu", "cuda", "cuda:1"; default "cpu"
  std::uint64_t policy_version = 0;  // the version `model` holds; default 0

  // ---- tasks
  std::string tasks_dir = "configs/tasks";  // task ID is ROOT/ID/task.py or ROOT/ID.py; default "configs/tasks"
  // Task ids, optionally "ID=WEIGHT" (weighted schedule), or "PREFIX/*" for
  // every folder under ROOT/PREFIX holding a task.py and every
  // ROOT/PREFIX/NAME.py (KernelBench's files). Default ["cpu/*"].
  std::vector<std::string> tasks = {"cpu/*"};
  std::string schedule = "round_robin";  // "round_robin" or "weighted" (random by weight); default round_robin

  // ---- prompt
  std::string prompt_template;       // template file; default "" = configs/prompts/contrastive.md, built in
  std::string platform = "CUDA";     // {{platform}} in the template; default "CUDA"
  // An instruct model's chat template (the model folder's
  // tokenizer_config.json chat_template) wraps the prompt as the user's
  // message, as transformers' apply_chat_template does; false, or a model
  // without one, sends the prompt as plain text. Default true.
  bool chat_template = true;
  std::string system_prompt;         // with a chat template: a system message first; default "" (none)
  std::uint32_t exemplars = 2;       // N previous codes from distinct buckets; default 2 (the paper)
  double exemplar_temperature = 0;   // tau of the bucket sampler; default 0 = the store's own
  std::chrono::milliseconds exemplar_deadline{10000};  // then the prompt goes without exemplars; default 10000

  // ---- sampling
  std::uint32_t group_size = 8;          // G completions per prompt; default 8
  std::uint32_t max_new_tokens = 1024;   // default 1024
  double temperature = 1.0;              // default 1 (must match [learner] temperature)
  double top_p = 1.0;                    // default 1 (off)
  std::uint64_t top_k = 0;               // default 0 (off)
  std::uint64_t seed = 0;                // group n samples with seed (seed + n) * G + i; default 0
  // Groups sampled in one generation call: the next batch_groups groups'
  // exemplars are asked for together and their G * batch_groups completions
  // decoded as one batch, so the device works on more rows at once. Each
  // group keeps the samples it would get alone (its seeds) and goes to the
  // referee and the learner in its turn, unchanged; new weights discard the
  // groups waiting. Default 1 (one group per call).
  std::uint32_t batch_groups = 1;
  // Rows decoding at once in a call (continuous batching: a finished
  // completion's row takes the next waiting one; policy.hpp). Default 0: all
  // of the call's completions at once.
  std::uint32_t slots = 0;

  // ---- the loop
  std::uint64_t max_staleness = 4;       // wait while the learner's latest version > ours + this; default 4
  // Ask the learner before each group (learner.latest, then learner.start):
  // switch to its newest weights, and start only when its admission says go.
  // false: no learner requests (a stand-in learner, or tests). Default true.
  bool learner_admission = true;
  // Groups sent to the learner and not yet answered. The learner answers a
  // group once the batch holding it is trained, so keep this at least
  // [learner] groups_per_batch. Default 64.
  std::uint32_t max_pending_groups = 64;
  std::chrono::milliseconds settle_deadline{1800000};  // unsettled samples then leave the group; default 1800000
  std::string learner_job_kind = "learner.group";  // job kind of RolloutGroup jobs; default "learner.group"
  std::uint64_t groups = 0;              // stop after this many groups; default 0 (never)
  // A file holding the next group number, written when the learner has a
  // group: a restarted rollout resumes there and resubmits the same ids.
  // Default "" (none: start at group 0).
  std::string state_file;
  // Where weights received as chunks are unpacked; default "" = a folder in
  // the system's temporary directory.
  std::string weights_dir;
};

// [rollout]. Errors: unknown keys, wrong types, values out of range
// (group_size 0, temperature <= 0, top_p outside (0, 1], a bad schedule or
// task weight).
status read(config::section s, rollout_options& out);

// "G=8, 2 exemplars, max_staleness 4, round_robin over cpu/*" for logs.
std::string describe(const rollout_options& o);

}  // namespace crucible::rollout
