// learner_bench: the learner's GPU benchmarks (issues 7 and 9), run by
// tools/gpu/learner_gpu.sh. Each prints JSON lines on stdout.
//
//   learner_bench grpo --model DIR [--groups 8 --group-size 4 --prompt 256
//       --completion 768 --micro-batches 4 --kl-beta 0.04 --steps 5 --warmup 2]
//       [--nccl RANK WORLD STORE] [--lora-rank R --lora-alpha A]
//       [--activation-checkpointing]
//     GRPO steps of crucible's trainer (bf16 autocast over fp32 weights) on a
//     synthetic batch that tools/gpu/learner_bench.py builds the same way for
//     its PyTorch eager step. With --nccl, one data-parallel rank; every rank
//     sees its GPU as cuda:0 and is given the same batch of groups. With
//     --lora-rank, adapters on every projection train over the frozen base
//     (the KL reference is the base without them). The line carries the
//     base's parameter count and the device memory in use at the end.
//   learner_bench publish --model DIR --work DIR [--repeat 3] [--lora-rank R]
//     publication of the policy's weights (with --lora-rank, of fresh
//     adapters alone, applied onto the base the rollout holds) to a rollout
//     on the same node:
//     the learner's side as learner_actor.cpp's publish() does it
//     (weight_publisher: one bf16 copy on the device, one transfer to the
//     host, hashed once, written once with a publish_dir), the rollout's as
//     rollout_actor.cpp does it (a published path through
//     rollout::weights_folder, or chunks through weight_assembler, hashed
//     once, and rollout::unpack_weights), then policy::policy::load onto the GPU.
#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <nlohmann/json.hpp>

#include "actors/learner/distributed.hpp"
#include "actors/learner/publication.hpp"
#include "actors/learner/trainer.hpp"
#include "actors/learner/weight_publisher.hpp"
#include "actors/policy/device_memory.hpp"
#include "actors/policy/lora_adapters.hpp"
#include "actors/policy/policy.hpp"
#include "actors/rollout/weights_folder.hpp"

namespace crucible::learner {
namespace {

namespace fs = std::filesystem;
using clock = std::chrono::steady_clock;

double since(clock::time_point t) { return std::chrono::duration<double>(clock::now() - t).count(); }

// Every parameter of the model (the base's, without adapters): the N of 6N FLOPs a token.
std::int64_t parameter_count(const policy::causal_lm& model) {
  std::int64_t n = 0;
  for (const auto& p : model.parameters()) n += p.numel();
  return n;
}

void synchronize(const torch::Device& device) {
#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
  if (device.is_cuda()) torch::cuda::synchronize();
#else
  (void)device;
#endif
}

struct grpo_args {
  std::string model;
  int groups = 8, group_size = 4, prompt = 256, completion = 768, micro_batches = 4, steps = 5, warmup = 2;
  double kl_beta = 0.04;
  std::vector<std::string> nccl;  // RANK WORLD STORE
  std::uint32_t lora_rank = 0;    // > 0: LoRA on every projection (alpha lora_alpha), the base frozen
  double lora_alpha = 16;
  bool activation_checkpointing = false;
};

// The synthetic batch; tools/gpu/learner_bench.py's batch() is the same
// arithmetic: group g's prompt, sample s's completion, behaviour log-probs
// near a random model's (about -log vocab) and rewards that differ within groups.
std::vector<rollout_group> synthetic_batch(const grpo_args& a, std::int64_t vocab, std::uint64_t version) {
  std::vector<rollout_group> batch(static_cast<std::size_t>(a.groups));
  for (int g = 0; g < a.groups; ++g) {
    auto& group = batch[static_cast<std::size_t>(g)];
    group.group_id = "g" + std::to_string(g);
    group.task_id = "bench";
    group.policy_version = version;
    for (int i = 0; i < a.group_size; ++i) {
      const std::int64_t s = static_cast<std::int64_t>(g) * a.group_size + i;
      rollout_sample sample;
      for (std::int64_t t = 0; t < a.prompt; ++t)
        sample.prompt_ids.push_back(static_cast<std::int32_t>((1000003 * g + 7919 * t + 17) % vocab));
      for (std::int64_t t = 0; t < a.completion; ++t) {
        sample.completion_ids.push_back(static_cast<std::int32_t>((104729 * s + 31337 * t + 5) % vocab));
        sample.behaviour_logprobs.push_back(static_cast<float>(-12.0 + static_cast<double>((s * 131 + t * 71) % 1000) / 1000.0));
      }
      sample.token_versions.assign(sample.completion_ids.size(), version);
      sample.reward = static_cast<double>((g * 7 + i * 3) % 5) / 4.0;
      group.samples.push_back(std::move(sample));
    }
  }
  return batch;
}

int run_grpo(const grpo_args& a) {
  int rank = 0, world = 1;
  std::unique_ptr<collective> dp;
  if (!a.nccl.empty()) {
    nccl_options n;
    n.rank = rank = std::stoi(a.nccl[0]);
    n.world_size = world = std::stoi(a.nccl[1]);
    n.store_path = a.nccl[2];
    auto joined = join_nccl(n);
    if (!joined) {
      std::fprintf(stderr, "%s\n", joined.error().text().c_str());
      return 1;
    }
    dp = std::move(*joined);
  }
  policy::model_placement placement;
  placement.device = torch::cuda::is_available() ? "cuda" : "cpu";
  placement.compute_dtype = policy::dtype::f32;  // fp32 master weights, bf16 autocast (as the learner role)
  auto model = policy::load_causal_lm(a.model, placement);
  if (!model) {
    std::fprintf(stderr, "%s\n", model.error().text().c_str());
    return 1;
  }
  learner_options o;
  o.kl_beta = a.kl_beta;
  o.groups_per_batch = static_cast<std::uint64_t>(a.groups);
  o.micro_batches = static_cast<std::uint64_t>(a.micro_batches);
  o.device = placement.device;
  o.max_staleness = 1000000;
  o.lora.rank = a.lora_rank;
  o.lora.alpha = a.lora_alpha;
  o.activation_checkpointing = a.activation_checkpointing;
  auto t = trainer::create(*model, nullptr, o, dp.get());
  if (!t) {
    std::fprintf(stderr, "%s\n", t.error().text().c_str());
    return 1;
  }
  const torch::Device device((*model)->device());
  const auto vocab = (*model)->config().vocab_size;
  std::vector<double> losses, times;
  double tokens = 0;
  for (int step = 0; step < a.warmup + a.steps; ++step) {
    auto batch = synthetic_batch(a, vocab, (*t)->version());
    synchronize(device);
    const auto start = clock::now();
    auto r = (*t)->train_grpo(batch);
    synchronize(device);
    const double seconds = since(start);
    if (!r) {
      std::fprintf(stderr, "%s\n", r.error().text().c_str());
      return 1;
    }
    losses.push_back(r->loss);
    if (step >= a.warmup) {
      times.push_back(seconds);
      tokens += static_cast<double>(r->tokens);
    }
  }
  double total = 0;
  for (double s : times) total += s;
  if (rank == 0) {
    nlohmann::json j{{"bench", "grpo"},
                     {"impl", "crucible"},
                     {"world", world},
                     {"groups", a.groups},
                     {"group_size", a.group_size},
                     {"prompt", a.prompt},
                     {"completion", a.completion},
                     {"micro_batches", a.micro_batches},
                     {"kl_beta", a.kl_beta},
                     {"steps", a.steps},
                     {"tokens_per_step", tokens / static_cast<double>(a.steps)},
                     {"seconds_per_step", total / static_cast<double>(a.steps)},
                     {"tokens_per_second", tokens / total},
                     {"step_seconds", times},
                     {"losses", losses},
                     {"lora_rank", a.lora_rank},
                     {"lora_alpha", a.lora_alpha},
                     {"activation_checkpointing", a.activation_checkpointing},
                     // One optimizer step a batch, no dropout: the trainer takes the
                     // proximal log-probabilities from the trained forward (trainer.cpp).
                     {"proximal_forward", o.mini_batches > 1},
                     {"parameters", parameter_count(**model)},
                     {"device_memory_used_gib", policy::device_memory_used_gib()}};
    std::printf("%s\n", j.dump().c_str());
    std::fflush(stdout);
  }
  return 0;
}

struct publish_args {
  std::string model, work;
  int repeat = 3;
  std::uint32_t lora_rank = 0;  // > 0: fresh adapters on every projection, published alone
};

int run_publish(const publish_args& a) {
  policy::model_placement learner_placement;
  learner_placement.device = "cuda";
  learner_placement.compute_dtype = policy::dtype::f32;
  auto model = policy::load_causal_lm(a.model, learner_placement);
  if (!model) {
    std::fprintf(stderr, "%s\n", model.error().text().c_str());
    return 1;
  }
  policy::model_placement rollout_placement;  // as rollout_actor.cpp: device only (bf16 on CUDA)
  rollout_placement.device = "cuda";
  // LoRA: the learner's model carries adapters, so a publication is the
  // adapters alone, and the rollout applies them onto the base it holds
  // (rollout_actor.cpp's switch_weights).
  std::optional<policy::policy> rollout_base;
  if (a.lora_rank > 0) {
    policy::lora_options lo;
    lo.rank = a.lora_rank;
    if (auto added = policy::add_lora(**model, lo, 1); !added) {
      std::fprintf(stderr, "%s\n", added.error().text().c_str());
      return 1;
    }
    auto base = policy::policy::load(a.model, rollout_placement);
    if (!base) {
      std::fprintf(stderr, "%s\n", base.error().text().c_str());
      return 1;
    }
    rollout_base.emplace(std::move(*base));
  }
  const std::uint64_t chunk_bytes = learner_options{}.publish_chunk_bytes;
  // The learner's publishers, one per mode as learner_actor.cpp makes them.
  weight_publisher_options path_options;
  path_options.publish_dir = (fs::path(a.work) / "path").string();
  path_options.chunk_bytes = chunk_bytes;
  path_options.tokenizer_from = a.model;
  weight_publisher_options chunk_options;
  chunk_options.chunk_bytes = chunk_bytes;
  weight_publisher to_path(path_options), to_chunks(chunk_options);
  if (!rollout_base) {
    // Once: the published bytes against what save_causal_lm writes (the
    // earlier path: fp32 to the host, converted there, written, read back).
    policy::save_options so;
    so.max_shard_bytes = ~std::uint64_t{0};
    const fs::path saved = fs::path(a.work) / "saved";
    auto p = to_chunks.publish(**model, 0);
    if (!p || !policy::save_causal_lm(**model, saved, so)) {
      std::fprintf(stderr, "publish_check: cannot publish or save\n");
      return 1;
    }
    std::ifstream in(saved / "model.safetensors", std::ios::binary);
    const std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto bytes = to_chunks.bytes();
    const bool identical = expected.size() == bytes.size() && std::memcmp(expected.data(), bytes.data(), bytes.size()) == 0;
    std::printf("%s\n", nlohmann::json{{"bench", "publish_check"}, {"bytes", bytes.size()}, {"identical_to_save_causal_lm", identical}}.dump().c_str());
    std::fflush(stdout);
    if (!identical) return 1;
  }
  for (int r = 0; r < a.repeat; ++r) {
    const std::uint64_t version = static_cast<std::uint64_t>(r) + 1;
    for (const std::string mode : {"path", "chunks"}) {
      auto& publisher = mode == "path" ? to_path : to_chunks;
      synchronize(torch::Device("cuda"));
      const auto t0 = clock::now();
      // The learner: learner_actor.cpp's publish().
      auto p = publisher.publish(**model, version);
      if (!p) {
        std::fprintf(stderr, "%s\n", p.error().text().c_str());
        return 1;
      }
      const double learner_s = since(t0);
      // The rollout: rollout_actor.cpp's on_latest / on_chunk, then switch_weights.
      const auto t1 = clock::now();
      fs::path dir;
      double assemble_s = 0;
      if (mode == "path") {
        auto d = rollout::weights_folder(p->path, a.model, (fs::path(a.work) / "rollout").string(), "bench", version);
        if (!d) {
          std::fprintf(stderr, "%s\n", d.error().text().c_str());
          return 1;
        }
        dir = *d;
      } else {
        const auto bytes = publisher.bytes();
        weight_assembler assembler(*p);
        for (std::uint32_t i = 0; i < p->chunks; ++i) (void)assembler.add(i, chunk_of(bytes, i, chunk_bytes));
        auto weights = assembler.finish();
        if (!weights) {
          std::fprintf(stderr, "%s\n", weights.error().text().c_str());
          return 1;
        }
        assemble_s = since(t1);
        auto d = rollout::unpack_weights(*weights, a.model, (fs::path(a.work) / "rollout").string(), "bench", version);
        if (!d) {
          std::fprintf(stderr, "%s\n", d.error().text().c_str());
          return 1;
        }
        dir = *d;
      }
      const double receive_s = since(t1);
      const auto t2 = clock::now();
      if (rollout_base) {
        if (auto s = rollout_base->load_adapters(dir); !s) {
          std::fprintf(stderr, "%s\n", s.error().text().c_str());
          return 1;
        }
      } else if (auto loaded = policy::policy::load(dir, rollout_placement); !loaded) {
        std::fprintf(stderr, "%s\n", loaded.error().text().c_str());
        return 1;
      }
      synchronize(torch::Device("cuda"));
      const double load_s = since(t2);
      nlohmann::json j{{"bench", "publish"},    {"mode", mode},          {"version", version},
                       {"lora_rank", a.lora_rank},
                       {"bytes", p->total_bytes}, {"chunks", p->chunks},    {"learner_seconds", learner_s},
                       {"assemble_seconds", assemble_s}, {"receive_seconds", receive_s}, {"load_seconds", load_s},
                       {"total_seconds", learner_s + receive_s + load_s}};
      std::printf("%s\n", j.dump().c_str());
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace crucible::learner

int main(int argc, char** argv) {
  using namespace crucible::learner;
  CLI::App app{"learner_bench: GRPO step tokens/s and weight publication timing (tools/gpu/learner_gpu.sh)"};
  app.require_subcommand(1);
  grpo_args g;
  auto* grpo = app.add_subcommand("grpo", "GRPO steps of crucible's trainer on a synthetic batch");
  grpo->add_option("--model", g.model, "Hugging Face folder of the policy")->required();
  grpo->add_option("--groups", g.groups, "groups per batch");
  grpo->add_option("--group-size", g.group_size, "samples per group");
  grpo->add_option("--prompt", g.prompt, "prompt tokens per sample");
  grpo->add_option("--completion", g.completion, "completion tokens per sample");
  grpo->add_option("--micro-batches", g.micro_batches, "gradient-accumulation slices");
  grpo->add_option("--kl-beta", g.kl_beta, "KL weight (> 0 keeps a reference)");
  grpo->add_option("--steps", g.steps, "timed steps");
  grpo->add_option("--warmup", g.warmup, "untimed steps first");
  grpo->add_option("--nccl", g.nccl, "RANK WORLD STORE: one NCCL data-parallel rank")->expected(3);
  grpo->add_option("--lora-rank", g.lora_rank, "LoRA rank on every attention and MLP projection (0: full weights)");
  grpo->add_option("--lora-alpha", g.lora_alpha, "LoRA alpha");
  grpo->add_flag("--activation-checkpointing", g.activation_checkpointing, "recompute each layer in the backward");
  publish_args p;
  auto* publish = app.add_subcommand("publish", "publication of the weights to a rollout's loader");
  publish->add_option("--model", p.model, "Hugging Face folder of the policy")->required();
  publish->add_option("--work", p.work, "scratch folder")->required();
  publish->add_option("--repeat", p.repeat, "versions published");
  publish->add_option("--lora-rank", p.lora_rank, "publish fresh LoRA adapters of this rank (the adapters alone)");
  CLI11_PARSE(app, argc, argv);
  if (grpo->parsed()) return run_grpo(g);
  return run_publish(p);
}
