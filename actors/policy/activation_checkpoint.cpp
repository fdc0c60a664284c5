#include "actors/policy/activation_checkpoint.hpp"

#include <ATen/autocast_mode.h>
#include <torch/version.h>

#include <cstdint>
#include <vector>

#include "actors/policy/causal_lm.hpp"
#include "actors/policy/lora_adapters.hpp"

// LibTorch 2.4 replaced is_enabled / set_enabled with per-device calls.
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4)
#define CRUCIBLE_AUTOCAST_BY_DEVICE 1
#else
#define CRUCIBLE_AUTOCAST_BY_DEVICE 0
#endif

namespace crucible::policy {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

bool cuda_autocast() {
#if CRUCIBLE_AUTOCAST_BY_DEVICE
  return at::autocast::is_autocast_enabled(at::kCUDA);
#else
  return at::autocast::is_enabled();
#endif
}

void set_cuda_autocast(bool on) {
#if CRUCIBLE_AUTOCAST_BY_DEVICE
  at::autocast::set_autocast_enabled(at::kCUDA, on);
#else
  at::autocast::set_enabled(on);
#endif
}

at::ScalarType cuda_autocast_dtype() {
#if CRUCIBLE_AUTOCAST_BY_DEVICE
  return at::autocast::get_autocast_dtype(at::kCUDA);
#else
  return at::autocast::get_autocast_gpu_dtype();
#endif
}

void set_cuda_autocast_dtype(at::ScalarType t) {
#if CRUCIBLE_AUTOCAST_BY_DEVICE
  at::autocast::set_autocast_dtype(at::kCUDA, t);
#else
  at::autocast::set_autocast_gpu_dtype(t);
#endif
}

// The generators a layer can draw from (dropout): the CPU's and, for a
// model on a GPU, that GPU's.
std::vector<at::Generator> generators(const torch::Device& device) {
  std::vector<at::Generator> out{at::globalContext().defaultGenerator(torch::kCPU)};
  if (!device.is_cpu()) out.push_back(at::globalContext().defaultGenerator(device));
  return out;
}

std::vector<torch::Tensor> states_of(std::vector<at::Generator>& gens) {
  std::vector<torch::Tensor> out;
  for (auto& g : gens) {
    std::lock_guard<std::mutex> lock(g.mutex());
    out.push_back(g.get_state());
  }
  return out;
}

void restore(std::vector<at::Generator>& gens, const std::vector<torch::Tensor>& states) {
  for (std::size_t i = 0; i < gens.size(); ++i) {
    std::lock_guard<std::mutex> lock(gens[i].mutex());
    gens[i].set_state(states[i]);
  }
}

// Every tensor a layer's gradient can reach: the network's parameters and its
// adapters' (only those that require gradients are differentiated).
std::vector<torch::Tensor> weights_of(causal_lm& model) {
  auto out = model.parameters();
  if (model.adapters())
    for (auto& p : model.adapters()->parameters()) out.push_back(p);
  return out;
}

struct recomputed_layer : torch::autograd::Function<recomputed_layer> {
  // Inputs: the model and layer index (not tensors), x, cos, sin, the mask
  // (optional), then every weight (weights_of), so that autograd routes
  // their gradients through this node.
  static torch::Tensor forward(AutogradContext* ctx, causal_lm* model, std::int64_t index, const torch::Tensor& x,
                               const torch::Tensor& cos, const torch::Tensor& sin,
                               const c10::optional<torch::Tensor>& mask, torch::TensorList weights) {
    ctx->saved_data["model"] = reinterpret_cast<std::int64_t>(model);
    ctx->saved_data["index"] = index;
    ctx->saved_data["weights"] = static_cast<std::int64_t>(weights.size());
    ctx->saved_data["autocast"] = cuda_autocast();
    ctx->saved_data["autocast_dtype"] = static_cast<std::int64_t>(cuda_autocast_dtype());
    ctx->saved_data["adapters_training"] = model->adapters() && model->adapters()->is_training();  // dropout
    ctx->saved_data["cos"] = cos;
    ctx->saved_data["sin"] = sin;
    if (mask) ctx->saved_data["mask"] = *mask;
    auto gens = generators(x.device());
    ctx->saved_data["rng"] = states_of(gens);
    ctx->save_for_backward({x});
    return model->layer(static_cast<std::size_t>(index), x, cos, sin, mask ? *mask : torch::Tensor());
  }

  static variable_list backward(AutogradContext* ctx, variable_list grad_out) {
    auto* model = reinterpret_cast<causal_lm*>(ctx->saved_data["model"].toInt());
    const auto index = static_cast<std::size_t>(ctx->saved_data["index"].toInt());
    const auto n_weights = static_cast<std::size_t>(ctx->saved_data["weights"].toInt());
    const auto cos = ctx->saved_data["cos"].toTensor(), sin = ctx->saved_data["sin"].toTensor();
    const auto mask = ctx->saved_data.count("mask") ? ctx->saved_data["mask"].toTensor() : torch::Tensor();
    const auto x = ctx->get_saved_variables()[0];

    // The forward again, with gradients, under the forward's RNG states and
    // autocast setting; the caller's RNG states and autocast put back after.
    auto gens = generators(x.device());
    const auto caller_states = states_of(gens);
    restore(gens, ctx->saved_data["rng"].toTensorVector());
    const bool caller_autocast = cuda_autocast();
    const auto caller_dtype = cuda_autocast_dtype();
    const bool autocast = ctx->saved_data["autocast"].toBool();
    set_cuda_autocast(autocast);
    set_cuda_autocast_dtype(static_cast<at::ScalarType>(ctx->saved_data["autocast_dtype"].toInt()));
    const auto& adapters = model->adapters();
    const bool caller_training = adapters && adapters->is_training();
    if (adapters) adapters->train(ctx->saved_data["adapters_training"].toBool());
    auto input = x.detach().requires_grad_(x.requires_grad());
    torch::Tensor out;
    {
      torch::AutoGradMode grad(true);
      out = model->layer(index, input, cos, sin, mask);
    }
    if (adapters) adapters->train(caller_training);
    set_cuda_autocast(caller_autocast);
    set_cuda_autocast_dtype(caller_dtype);
    // Autocast keeps, per thread, the bf16 casts of the fp32 weights that
    // require gradients (the adapters; every weight in full training) until
    // its cache is cleared. This may be the autograd engine's device thread,
    // which outlives the step: uncleared, the next step's recompute took the
    // weights the optimizer has since changed from that cache (LoRA's B as
    // the zeros of the first step, so A's gradient stayed 0). Cleared as
    // torch.utils.checkpoint's autocast region clears it when it ends.
    if (autocast) at::autocast::clear_cache();
    restore(gens, caller_states);

    // Gradients of the input and of the weights that require them.
    auto weights = weights_of(*model);
    std::vector<torch::Tensor> wrt;
    std::vector<std::size_t> where;  // position in the returned list
    const std::size_t first_weight = 6;  // model, index, x, cos, sin, mask
    if (input.requires_grad()) {
      wrt.push_back(input);
      where.push_back(2);
    }
    for (std::size_t i = 0; i < weights.size() && i < n_weights; ++i) {
      if (!weights[i].requires_grad()) continue;
      wrt.push_back(weights[i]);
      where.push_back(first_weight + i);
    }
    variable_list grads(first_weight + n_weights);
    if (wrt.empty() || !out.requires_grad()) return grads;
    auto computed = torch::autograd::grad({out}, wrt, {grad_out[0]}, /*retain_graph=*/false,
                                          /*create_graph=*/false, /*allow_unused=*/true);
    for (std::size_t k = 0; k < computed.size(); ++k) grads[where[k]] = computed[k];
    return grads;
  }
};

}  // namespace

torch::Tensor checkpointed_layer(causal_lm& model, std::size_t index, const torch::Tensor& x,
                                 const torch::Tensor& cos, const torch::Tensor& sin, const torch::Tensor& mask) {
  const auto weights = weights_of(model);
  const c10::optional<torch::Tensor> m = mask.defined() ? c10::optional<torch::Tensor>(mask) : c10::nullopt;
  return recomputed_layer::apply(&model, static_cast<std::int64_t>(index), x, cos, sin, m,
                                 torch::TensorList(weights));
}

}  // namespace crucible::policy
