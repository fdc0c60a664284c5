// learner_dp_probe RANK WORLD STORE OUT [gloo|nccl]: two GRPO steps of the
// tiny test policy (learner_test_support.hpp) on fixed batches, as rank RANK
// of WORLD data-parallel processes (WORLD 1: alone), then the final
// parameters and the losses saved to OUT. gloo (the default) trains on the
// CPU; nccl trains in fp32 on the GPU this process sees as cuda:0 (the test
// gives each rank one through CUDA_VISIBLE_DEVICES) while rollouts are still
// sampled on the CPU, so that every run sees the same batches. The
// data-parallel tests (distributed.test.cpp) run it alone and as two ranks
// and compare.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "actors/learner/distributed.hpp"
#include "actors/learner/learner_test_support.hpp"

int main(int argc, char** argv) {
  using namespace crucible::learner;
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr, "usage: learner_dp_probe RANK WORLD STORE OUT [gloo|nccl]\n");
    return 2;
  }
  torch::set_num_threads(1);
  const bool nccl = argc == 6 && std::string(argv[5]) == "nccl";
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
  auto sampler = testing::tiny_policy(31);
  auto model = sampler;
  if (nccl) {
    model = std::make_shared<crucible::policy::causal_lm>(testing::tiny_config(),
                                                          crucible::policy::model_placement{"cuda", crucible::policy::dtype::f32});
    copy_weights(*sampler, *model);
  }
  auto t = trainer::create(model, nullptr, options, dp.get());
  if (!t) {
    std::fprintf(stderr, "%s\n", t.error().text().c_str());
    return 1;
  }
  std::vector<torch::Tensor> out;
  for (std::uint64_t step = 0; step < 2; ++step) {
    if (model != sampler) copy_weights(*model, *sampler);
    auto groups = testing::sample_groups(*sampler, (*t)->version(), 40 + step);
    auto r = (*t)->train_grpo(groups);
    if (!r) {
      std::fprintf(stderr, "%s\n", r.error().text().c_str());
      return 1;
    }
    out.push_back(torch::tensor({r->loss, r->kl, r->clip_fraction, static_cast<double>(r->tokens)}, torch::kFloat64));
  }
  for (const auto& p : model->parameters()) out.push_back(p.detach().to(torch::kCPU).clone());
  torch::save(out, argv[4]);
  return 0;
}
