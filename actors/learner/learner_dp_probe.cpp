// learner_dp_probe RANK WORLD STORE OUT [gloo|nccl] [zero] [checkpoint DIR]:
// two GRPO steps of the tiny test policy (learner_test_support.hpp) on fixed
// batches, as rank RANK of WORLD data-parallel processes (WORLD 1: alone),
// then the final parameters and the losses saved to OUT. gloo (the default)
// trains on the CPU; nccl trains in fp32 on the GPU this process sees as
// cuda:0 (the test gives each rank one through CUDA_VISIBLE_DEVICES) while
// rollouts are still sampled on the CPU, so that every run sees the same
// batches. zero: [learner] zero_stage = 2. checkpoint DIR: when DIR holds a
// checkpoint, the probe resumes from it and takes the second step alone;
// else it takes the first step, checkpoints into DIR, builds a new policy
// and trainer from that checkpoint and takes the second step with them.
// OUT.bytes gets the last step's gradient_bytes and optimizer_state_bytes.
// The data-parallel tests (distributed.test.cpp) run it alone and as two
// ranks and compare.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "actors/learner/distributed.hpp"
#include "actors/learner/learner_test_support.hpp"

int main(int argc, char** argv) {
  using namespace crucible::learner;
  if (argc < 5) {
    std::fprintf(stderr, "usage: learner_dp_probe RANK WORLD STORE OUT [gloo|nccl] [zero] [checkpoint DIR]\n");
    return 2;
  }
  torch::set_num_threads(1);
  bool nccl = false, zero = false;
  std::filesystem::path checkpoints;
  for (int i = 5; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "nccl") nccl = true;
    else if (a == "zero") zero = true;
    else if (a == "checkpoint" && i + 1 < argc) checkpoints = argv[++i];
    else if (a != "gloo") {
      std::fprintf(stderr, "learner_dp_probe: unknown argument %s\n", a.c_str());
      return 2;
    }
  }
  const int rank = std::atoi(argv[1]), world = std::atoi(argv[2]);
  std::unique_ptr<collective> dp;
  if (world > 1) {
    crucible::result<std::unique_ptr<collective>> joined = crucible::make_error(crucible::errc::internal, "unjoined");
    if (nccl) {
      nccl_options n;
      n.rank = rank;
      n.world_size = world;
      n.store_path = argv[3];
      joined = join_nccl(n);
    } else {
      gloo_options g;
      g.rank = rank;
      g.world_size = world;
      g.store_path = argv[3];
      joined = join_gloo(g);
    }
    if (!joined) {
      std::fprintf(stderr, "%s\n", joined.error().text().c_str());
      return 1;
    }
    dp = std::move(*joined);
  }
  auto options = testing::tiny_options();
  options.kl_beta = 0.05;
  options.mini_batches = 2;
  options.micro_batches = 2;
  options.bf16_autocast = false;  // fp32 on the GPU too: the comparison is of summation order alone
  options.zero_stage = zero ? 2 : 0;
  // The sampler (CPU) and the trained model (the sampler itself, or its copy on the GPU).
  struct run {
    std::shared_ptr<crucible::policy::causal_lm> sampler, model;
    std::unique_ptr<trainer> t;
  };
  auto start = [&]() -> crucible::result<run> {
    run r;
    r.sampler = testing::tiny_policy(31);
    r.model = r.sampler;
    if (nccl) {
      r.model = std::make_shared<crucible::policy::causal_lm>(testing::tiny_config(),
                                                              crucible::policy::model_placement{"cuda", crucible::policy::dtype::f32});
      copy_weights(*r.sampler, *r.model);
    }
    auto t = trainer::create(r.model, nullptr, options, dp.get());
    if (!t) return t.error();
    r.t = std::move(*t);
    return r;
  };
  auto resumed = [&]() -> crucible::result<run> {
    auto r = start();
    if (!r) return r.error();
    CRUCIBLE_TRY(r->t->load_checkpoint(checkpoints));
    return r;
  };
  const bool resuming = !checkpoints.empty() && std::filesystem::exists(checkpoints / "latest");
  auto r = resuming ? resumed() : start();
  if (!r) {
    std::fprintf(stderr, "%s\n", r.error().text().c_str());
    return 1;
  }
  std::vector<torch::Tensor> out;
  step_report last;
  for (std::uint64_t step = 0; step < 2; ++step) {
    if (step == 0 && resuming) {  // taken by the run that wrote the checkpoint
      out.push_back(torch::zeros({4}, torch::kFloat64));
      continue;
    }
    if (r->model != r->sampler) copy_weights(*r->model, *r->sampler);
    auto groups = testing::sample_groups(*r->sampler, r->t->version(), 40 + step);
    auto report = r->t->train_grpo(groups);
    if (!report) {
      std::fprintf(stderr, "%s\n", report.error().text().c_str());
      return 1;
    }
    last = *report;
    out.push_back(torch::tensor({report->loss, report->kl, report->clip_fraction, static_cast<double>(report->tokens)},
                                torch::kFloat64));
    if (step == 0 && !checkpoints.empty()) {
      auto saved = r->t->save_checkpoint(checkpoints);
      if (saved) r = resumed();
      if (!saved || !r) {
        std::fprintf(stderr, "%s\n", (!saved ? saved.error() : r.error()).text().c_str());
        return 1;
      }
    }
  }
  for (const auto& p : r->model->parameters()) out.push_back(p.detach().to(torch::kCPU).clone());
  torch::save(out, argv[4]);
  std::ofstream bytes(std::string(argv[4]) + ".bytes");
  bytes << last.gradient_bytes << ' ' << last.optimizer_state_bytes << '\n';
  std::fprintf(stderr, "rank %d of %d, zero_stage %d: gradients %lld bytes, optimizer state %lld bytes\n", rank, world,
               zero ? 2 : 0, static_cast<long long>(last.gradient_bytes),
               static_cast<long long>(last.optimizer_state_bytes));
  return 0;
}
