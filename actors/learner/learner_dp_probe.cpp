// learner_dp_probe RANK WORLD STORE OUT: two GRPO steps of the tiny test
// policy (learner_test_support.hpp) on fixed batches, as rank RANK of WORLD
// data-parallel processes (WORLD 1: alone), then the final parameters and
// the losses saved to OUT. The data-parallel test (distributed.test.cpp)
// runs it alone and as two ranks and compares.
#include <cstdio>
#include <cstdlib>

#include "actors/learner/distributed.hpp"
#include "actors/learner/learner_test_support.hpp"

int main(int argc, char** argv) {
  using namespace crucible::learner;
  if (argc != 5) {
    std::fprintf(stderr, "usage: learner_dp_probe RANK WORLD STORE OUT\n");
    return 2;
  }
  torch::set_num_threads(1);
  gloo_options g;
  g.rank = std::atoi(argv[1]);
  g.world_size = std::atoi(argv[2]);
  g.store_path = argv[3];
  std::unique_ptr<collective> dp;
  if (g.world_size > 1) {
    auto joined = join_gloo(g);
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
  auto model = testing::tiny_policy(31);
  auto t = trainer::create(model, nullptr, options, dp.get());
  if (!t) {
    std::fprintf(stderr, "%s\n", t.error().text().c_str());
    return 1;
  }
  std::vector<torch::Tensor> out;
  for (std::uint64_t step = 0; step < 2; ++step) {
    auto groups = testing::sample_groups(*model, (*t)->version(), 40 + step);
    auto r = (*t)->train_grpo(groups);
    if (!r) {
      std::fprintf(stderr, "%s\n", r.error().text().c_str());
      return 1;
    }
    out.push_back(torch::tensor({r->loss, r->kl, r->clip_fraction, static_cast<double>(r->tokens)}, torch::kFloat64));
  }
  for (const auto& p : model->parameters()) out.push_back(p.detach().clone());
  torch::save(out, argv[4]);
  return 0;
}
