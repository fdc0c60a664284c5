// learner_resume_probe CKPT OUT STEPS [KILL_AT]: GRPO on the tiny test policy
// (learner_test_support.hpp) up to version STEPS, checkpointing into CKPT
// after every version and appending "VERSION LOSS" lines to OUT. It resumes
// from CKPT when that holds a checkpoint. With KILL_AT it sends itself
// SIGKILL after training version KILL_AT + 1 and before checkpointing it: a
// kill -9 in the middle of the work. Used by trainer.test.cpp.
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "actors/learner/learner_test_support.hpp"

int main(int argc, char** argv) {
  using namespace crucible::learner;
  if (argc != 4 && argc != 5) {
    std::fprintf(stderr, "usage: learner_resume_probe CKPT OUT STEPS [KILL_AT]\n");
    return 2;
  }
  torch::set_num_threads(1);
  const std::string ckpt = argv[1];
  const std::uint64_t steps = std::strtoull(argv[3], nullptr, 10);
  const long kill_at = argc == 5 ? std::atol(argv[4]) : -1;
  auto options = testing::tiny_options();
  options.kl_beta = 0.05;
  options.mini_batches = 2;
  options.warmup_steps = 2;
  options.total_steps = 20;
  std::shared_ptr<crucible::policy::causal_lm> model;
  auto weights = latest_checkpoint_weights(ckpt);
  if (weights) {
    auto loaded = crucible::policy::load_causal_lm(*weights, {"cpu", crucible::policy::dtype::f32});
    if (!loaded) return std::fprintf(stderr, "%s\n", loaded.error().text().c_str()), 1;
    model = *loaded;
  } else {
    model = testing::tiny_policy(21);
  }
  auto t = trainer::create(model, nullptr, options);
  if (!t) return std::fprintf(stderr, "%s\n", t.error().text().c_str()), 1;
  if (weights) {
    if (auto s = (*t)->load_checkpoint(ckpt); !s) return std::fprintf(stderr, "%s\n", s.error().text().c_str()), 1;
  }
  while ((*t)->version() < steps) {
    const auto version = (*t)->version();
    auto groups = testing::sample_groups(*model, version, version + 100);
    auto r = (*t)->train_grpo(groups);
    if (!r) return std::fprintf(stderr, "%s\n", r.error().text().c_str()), 1;
    if (kill_at >= 0 && version == static_cast<std::uint64_t>(kill_at) + 1) std::raise(SIGKILL);
    if (auto s = (*t)->save_checkpoint(ckpt); !s) return std::fprintf(stderr, "%s\n", s.error().text().c_str()), 1;
    std::ofstream(argv[2], std::ios::app) << version << ' ' << std::hexfloat << r->loss << '\n';
  }
  return 0;
}
