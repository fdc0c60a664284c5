// crucible-policy: the policy's tools in a binary of their own, for machines
// that build only the policy (tools/gpu/policy_gpu.sh) until runtime/cli
// registers them in `crucible`: generate, tokenize, save (load and save back,
// the round trip transformers checks), init (random weights for a folder of
// config.json and tokenizer.json, as `crucible run` makes them; the chaos
// test starts its learner and rollouts from one), init-lora (fresh adapters as
// a PEFT folder, for tools/gpu/lora_check.sh), merge-lora (a PEFT adapter
// folder, as the learner's LoRA checkpoints and publications are, merged into
// its base as a full checkpoint) and bench-generate.
#include "runtime/base/compute_tuning.hpp"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <numeric>
#include <nlohmann/json.hpp>
#include <random>

#include <CLI/CLI.hpp>

#include "actors/policy/generate_command.hpp"
#include "actors/policy/device_memory.hpp"
#include "actors/policy/lora.hpp"
#include "actors/policy/policy.hpp"
#include "actors/policy/tokenize_command.hpp"

namespace {

using namespace crucible::policy;

struct bench_request {
  std::string model_dir, device = "cuda";
  std::int64_t prompt_tokens = 512, new_tokens = 512;
  std::vector<std::int64_t> batches{1, 8, 64};
  bool cuda_graphs = true;
  bool fused_kernels = generation_options{}.fused_kernels;
  // Continuous batching against static batches (run_continuous_bench).
  std::int64_t prompts = 0;
  double mean_tokens = 0;
};

// `--prompts N`: N random prompts whose sampled completions end at an eos
// set that takes 1 / mean_tokens of the vocabulary (lengths near geometric,
// capped at new_tokens), generated for each batch size S twice: as N / S
// static batches (slots 0, a batch ends when its longest row does) and as
// one call with S slots (continuous batching). Both draw prompt i's tokens
// from seed 1 + i, so they generate the same completions; one JSON line each
// and the ratio. Called by main's bench-generate.
int run_continuous_bench(const policy& loaded, const bench_request& r) {
  const auto vocab = static_cast<std::int32_t>(loaded.config().vocab_size);
  std::mt19937 rng(1234);
  std::uniform_int_distribution<std::int32_t> token(0, vocab - 1);
  std::vector<std::int32_t> order(static_cast<std::size_t>(vocab));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), rng);
  const auto stops = std::max<std::size_t>(1, static_cast<std::size_t>(vocab / r.mean_tokens));
  generation_options o;
  o.sampling.temperature = 1.0;
  o.eos_token_ids = std::vector<std::int32_t>(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(stops));
  o.max_new_tokens = r.new_tokens;
  o.cuda_graphs = r.cuda_graphs;
  o.fused_kernels = r.fused_kernels;
  std::vector<std::vector<std::int32_t>> prompts(static_cast<std::size_t>(r.prompts));
  for (auto& p : prompts) {
    for (std::int64_t i = 0; i < r.prompt_tokens; ++i) p.push_back(token(rng));
  }
  auto run = [&](const std::vector<std::vector<std::int32_t>>& some, std::uint64_t seed, std::int64_t slots) {
    o.sampling.seed = seed;
    o.slots = slots;
    auto g = loaded.generate(some, o);
    if (!g) {
      std::cerr << "crucible-policy bench-generate: " << g.error().text() << "\n";
      std::exit(1);
    }
    return std::move(*g);
  };
  for (auto batch : r.batches) {
    run({prompts.begin(), prompts.begin() + std::min<std::int64_t>(batch, r.prompts)}, 1, 0);  // warm-up
    double seconds[2] = {0, 0};
    std::uint64_t tokens[2] = {0, 0};
    for (int continuous = 0; continuous < 2; ++continuous) {
      const auto t0 = std::chrono::steady_clock::now();
      std::vector<generation> done;
      if (continuous) {
        done = run(prompts, 1, batch);
      } else {
        for (std::int64_t first = 0; first < r.prompts; first += batch) {
          const auto last = std::min(first + batch, r.prompts);
          auto part = run({prompts.begin() + first, prompts.begin() + last}, 1 + static_cast<std::uint64_t>(first), 0);
          done.insert(done.end(), part.begin(), part.end());
        }
      }
      seconds[continuous] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (const auto& g : done) tokens[continuous] += g.ids.size();
      nlohmann::json j = {{"impl", continuous ? "continuous" : "static"},
                          {"device", r.device},
                          {"batch", batch},
                          {"prompts", r.prompts},
                          {"prompt_tokens", r.prompt_tokens},
                          {"new_tokens", r.new_tokens},
                          {"mean_completion_tokens", static_cast<double>(tokens[continuous]) / static_cast<double>(r.prompts)},
                          {"seconds", seconds[continuous]},
                          {"tokens_per_s", static_cast<double>(tokens[continuous]) / seconds[continuous]}};
      std::cout << j.dump() << std::endl;
    }
    std::cout << "batch " << batch << ": continuous batching over static batches: "
              << (static_cast<double>(tokens[1]) / seconds[1]) / (static_cast<double>(tokens[0]) / seconds[0])
              << "x tokens/s (" << tokens[1] << " and " << tokens[0] << " tokens)" << std::endl;
  }
  return 0;
}

int run_bench(const bench_request& r) {
  auto loaded = policy::load(r.model_dir, {.device = r.device, .compute_dtype = std::nullopt});
  if (!loaded) {
    std::cerr << "crucible-policy bench-generate: " << loaded.error().text() << "\n";
    return 1;
  }
  if (r.prompts > 0) return run_continuous_bench(*loaded, r);
  std::mt19937 rng(1234);
  std::uniform_int_distribution<std::int32_t> token(0, static_cast<std::int32_t>(loaded->config().vocab_size) - 1);
  generation_options o;
  o.sampling.greedy = true;
  o.eos_token_ids = std::vector<std::int32_t>{};  // always the full length, as the transformers side
  o.cuda_graphs = r.cuda_graphs;
  o.fused_kernels = r.fused_kernels;
  auto timed = [&](const std::vector<std::vector<std::int32_t>>& prompts, std::int64_t n) {
    o.max_new_tokens = n;
    auto t0 = std::chrono::steady_clock::now();
    auto g = loaded->generate(prompts, o);
    auto t1 = std::chrono::steady_clock::now();
    if (!g) {
      std::cerr << "crucible-policy bench-generate: " << g.error().text() << "\n";
      std::exit(1);
    }
    return std::chrono::duration<double>(t1 - t0).count();
  };
  for (auto batch : r.batches) {
    std::vector<std::vector<std::int32_t>> prompts(static_cast<std::size_t>(batch));
    for (auto& p : prompts) {
      for (std::int64_t i = 0; i < r.prompt_tokens; ++i) p.push_back(token(rng));
    }
    timed(prompts, 4);  // warm-up
    const double first = timed(prompts, 1);  // prefill and one token
    const double full = timed(prompts, r.new_tokens);
    // "crucible-fused": graphs and the fused kernels, as generation runs by
    // default; "crucible": LibTorch's ops there (--fused-kernels false).
    const bool fused = r.cuda_graphs && r.fused_kernels && loaded->fused_decode();
    nlohmann::json j = {{"impl", !r.cuda_graphs ? "crucible-eager" : fused ? "crucible-fused" : "crucible"},
                        {"device", r.device},
                        {"batch", batch},
                        {"prompt_tokens", r.prompt_tokens},
                        {"new_tokens", r.new_tokens},
                        {"seconds", full},
                        {"tokens_per_s", static_cast<double>(batch * r.new_tokens) / full},
                        {"prefill_s", first},
                        {"decode_step_ms", 1000.0 * (full - first) / static_cast<double>(r.new_tokens - 1)},
                        {"device_memory_used_gib", device_memory_used_gib()}};
    std::cout << j.dump() << std::endl;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  crucible::tune_process_for_compute();
  CLI::App app{"crucible-policy: the policy's generate, tokenize, save, init, init-lora, merge-lora and bench-generate commands"};
  app.require_subcommand(1);
  add_generate_command(app);
  add_tokenize_command(app);

  std::string from, to, device = "cpu", save_dtype;
  CLI::App* save = app.add_subcommand("save", "Load a checkpoint folder and save it back (round-trip check)");
  save->add_option("--model", from, "Checkpoint folder to load")->required();
  save->add_option("--out", to, "Folder to write")->required();
  save->add_option("--device", device, "cpu or cuda")->capture_default_str();
  save->add_option("--dtype", save_dtype, "float32, bfloat16 or float16 (default: config.json's dtype)");
  save->callback([&] {
    model_placement placement{.device = device, .compute_dtype = crucible::policy::dtype::f32};
    auto loaded = policy::load(from, placement);
    if (!loaded) {
      std::cerr << "crucible-policy save: " << loaded.error().text() << "\n";
      throw CLI::RuntimeError(1);
    }
    save_options options;
    if (save_dtype == "float32") options.tensor_dtype = crucible::policy::dtype::f32;
    if (save_dtype == "bfloat16") options.tensor_dtype = crucible::policy::dtype::bf16;
    if (save_dtype == "float16") options.tensor_dtype = crucible::policy::dtype::f16;
    if (auto s = loaded->save(to, options); !s) {
      std::cerr << "crucible-policy save: " << s.error().text() << "\n";
      throw CLI::RuntimeError(1);
    }
  });

  std::string init_from, init_to;
  std::uint64_t init_seed = 0;
  CLI::App* init = app.add_subcommand("init", "Random weights for a folder holding config.json and tokenizer.json");
  init->add_option("--model", init_from, "Folder with config.json and tokenizer.json")->required();
  init->add_option("--out", init_to, "Folder to write (weights, config, tokenizer)")->required();
  init->add_option("--seed", init_seed, "Seed of the weights")->capture_default_str();
  init->callback([&] {
    auto made = policy::initialize(init_from, init_seed);
    auto saved = made ? made->save(init_to) : crucible::status(made.error());
    if (!saved) {
      std::cerr << "crucible-policy init: " << saved.error().text() << "\n";
      throw CLI::RuntimeError(1);
    }
  });

  std::string merge_base, merge_adapter, merge_out, merge_dtype;
  CLI::App* merge = app.add_subcommand(
      "merge-lora", "Merge a PEFT adapter folder into its base: a full Hugging Face checkpoint (W + alpha/r B A)");
  merge->add_option("--model", merge_base, "The base model's folder")->required();
  merge->add_option("--adapter", merge_adapter, "PEFT folder (adapter_config.json, adapter_model.safetensors)")->required();
  merge->add_option("--out", merge_out, "Folder to write (weights, config, tokenizer)")->required();
  merge->add_option("--dtype", merge_dtype, "float32, bfloat16 or float16 (default: the base's config.json dtype)");
  merge->callback([&] {
    auto loaded = policy::load(merge_base, {.device = "cpu", .compute_dtype = crucible::policy::dtype::f32});
    crucible::status s = loaded ? loaded->load_adapters(merge_adapter) : crucible::status(loaded.error());
    if (s) {
      loaded->merge_adapters();
      save_options options;
      if (merge_dtype == "float32") options.tensor_dtype = crucible::policy::dtype::f32;
      if (merge_dtype == "bfloat16") options.tensor_dtype = crucible::policy::dtype::bf16;
      if (merge_dtype == "float16") options.tensor_dtype = crucible::policy::dtype::f16;
      s = loaded->save(merge_out, options);
    }
    if (!s) {
      std::cerr << "crucible-policy merge-lora: " << s.error().text() << "\n";
      throw CLI::RuntimeError(1);
    }
  });

  std::string lora_model, lora_out;
  crucible::policy::lora_options lora;
  lora.rank = 8;
  std::uint64_t lora_seed = 0;
  double lora_b_std = 0;
  CLI::App* init_lora = app.add_subcommand(
      "init-lora", "Fresh LoRA adapters for a model, written as a PEFT folder (B drawn N(0, b-std^2) when b-std > 0)");
  init_lora->add_option("--model", lora_model, "The base model's folder")->required();
  init_lora->add_option("--out", lora_out, "PEFT folder to write")->required();
  init_lora->add_option("--rank", lora.rank)->capture_default_str();
  init_lora->add_option("--alpha", lora.alpha)->capture_default_str();
  init_lora->add_option("--targets", lora.targets)->delimiter(',')->capture_default_str();
  init_lora->add_option("--seed", lora_seed)->capture_default_str();
  init_lora->add_option("--b-std", lora_b_std, "0: B is zero (PEFT's init); > 0: random, so that the adapters change the output")
      ->capture_default_str();
  init_lora->callback([&] {
    auto loaded = policy::load(lora_model, {.device = "cpu", .compute_dtype = crucible::policy::dtype::f32});
    auto s = loaded ? crucible::policy::write_fresh_adapters(*loaded, lora, lora_seed, lora_b_std, lora_out, lora_model)
                    : crucible::status(loaded.error());
    if (!s) {
      std::cerr << "crucible-policy init-lora: " << s.error().text() << "\n";
      throw CLI::RuntimeError(1);
    }
  });

  auto bench = std::make_shared<bench_request>();
  CLI::App* b = app.add_subcommand("bench-generate", "Greedy generation throughput on random prompts (one JSON line per batch size)");
  b->add_option("--model", bench->model_dir, "Checkpoint folder")->required();
  b->add_option("--device", bench->device)->capture_default_str();
  b->add_option("--prompt-tokens", bench->prompt_tokens)->capture_default_str();
  b->add_option("--new-tokens", bench->new_tokens)->capture_default_str();
  b->add_option("--batch", bench->batches, "Batch sizes")->delimiter(',');
  b->add_option("--cuda-graphs", bench->cuda_graphs, "Decode with CUDA graphs where available (true/false)")
      ->capture_default_str();
  b->add_option("--fused-kernels", bench->fused_kernels,
                "With CUDA graphs: the fused decode kernels where the build has them (true/false)")
      ->capture_default_str();
  b->add_option("--prompts", bench->prompts,
                "Continuous batching against static batches over this many sampled prompts (each --batch is the slots)")
      ->check(CLI::PositiveNumber);
  b->add_option("--mean-tokens", bench->mean_tokens, "With --prompts: eos ids drawn so completions average about this long")
      ->default_val(128)
      ->check(CLI::PositiveNumber);
  b->callback([bench] {
    if (int code = run_bench(*bench); code != 0) throw CLI::RuntimeError(code);
  });
  CLI11_PARSE(app, argc, argv);
  return 0;
}
