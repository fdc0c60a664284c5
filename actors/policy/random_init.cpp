// policy::initialize (policy.hpp): a policy with random weights, for training
// from scratch (the quick-start's tiny policy); and set_compute_threads.
#include <fstream>
#include <sstream>

#include <torch/torch.h>

#include "actors/policy/causal_lm.hpp"
#include "actors/policy/policy.hpp"

namespace crucible::policy {

result<policy> policy::initialize(const std::filesystem::path& dir, std::uint64_t seed, double std,
                                  const model_placement& placement) try {
  auto config = read_model_config(dir / "config.json");
  if (!config) return config.error();
  auto tok = tokenizer::load(dir / "tokenizer.json");
  if (!tok) return tok.error();
  auto model = std::make_shared<causal_lm>(*config, placement);
  std::ifstream in(dir / "config.json");
  std::stringstream text;
  text << in.rdbuf();
  model->set_config_json(text.str());
  // Drawn on the CPU from one seeded generator, in the order of
  // named_parameters(), so a seed gives the same weights on any device.
  auto gen = at::detail::createCPUGenerator(seed);
  torch::NoGradGuard no_grad;
  for (auto& p : model->named_parameters()) {
    const std::string& name = p.key();
    torch::Tensor value;
    if (name.find("norm.weight") != std::string::npos)
      value = torch::ones(p.value().sizes());
    else if (name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0)
      value = torch::zeros(p.value().sizes());
    else
      value = at::normal(0.0, std, p.value().sizes(), gen);
    p.value().copy_(value);
  }
  return policy(std::move(model), std::move(*tok));
} catch (const c10::Error& e) {
  return make_error(errc::internal, std::string("initialising a policy from ") + dir.string() + ": " +
                                        e.what_without_backtrace());
}

void set_compute_threads(int threads) { at::set_num_threads(threads); }

}  // namespace crucible::policy
