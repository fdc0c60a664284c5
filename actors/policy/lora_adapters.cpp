#include "actors/policy/lora_adapters.hpp"

#include <ATen/CPUGeneratorImpl.h>

#include <cmath>
#include <cstring>

#include "actors/policy/parameter_tree.hpp"
#include "actors/policy/policy.hpp"
#include "runtime/base/write_file.hpp"

namespace crucible::policy {

namespace fs = std::filesystem;

namespace {

// {out, in} of lora_modules[module] in a network of `c`.
std::pair<std::int64_t, std::int64_t> module_shape(const model_config& c, std::size_t module) {
  const std::int64_t q_out = c.num_attention_heads * c.head_dim, kv_out = c.num_key_value_heads * c.head_dim;
  switch (module) {
    case 0: return {q_out, c.hidden_size};
    case 1:
    case 2: return {kv_out, c.hidden_size};
    case 3: return {c.hidden_size, q_out};
    case 4:
    case 5: return {c.intermediate_size, c.hidden_size};
    default: return {c.hidden_size, c.intermediate_size};
  }
}

}  // namespace

lora_adapters::lora_adapters(const model_config& config, lora_options options, torch::Device device,
                             torch::ScalarType dtype, std::uint64_t seed)
    : config_(config), options_(std::move(options)) {
  CRUCIBLE_CHECK(options_.enabled() && validate(options_).ok(), "lora_adapters needs valid options with rank > 0");
  torch::NoGradGuard no_grad;
  auto gen = at::detail::createCPUGenerator(seed);
  const auto r = static_cast<std::int64_t>(options_.rank);
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32);
  const auto placed = torch::TensorOptions().dtype(dtype).device(device);
  a_.resize(static_cast<std::size_t>(config.num_hidden_layers));
  b_.resize(a_.size());
  for (std::int64_t layer = 0; layer < config.num_hidden_layers; ++layer) {
    for (std::size_t m = 0; m < lora_module_count; ++m) {
      if (!options_.targets_module(m)) continue;
      const auto [out, in] = module_shape(config, m);
      const double bound = 1.0 / std::sqrt(static_cast<double>(in));  // kaiming_uniform(a = sqrt(5))
      auto a = (torch::rand({r, in}, gen, f32) * (2 * bound) - bound).to(placed);
      auto b = torch::zeros({out, r}, placed);
      const auto i = static_cast<std::size_t>(layer);
      a_[i][m] = add_parameter(*this, peft_tensor_name(layer, m, 'A'), a);
      b_[i][m] = add_parameter(*this, peft_tensor_name(layer, m, 'B'), b);
    }
  }
  eval();
}

torch::Tensor lora_adapters::add_delta(std::size_t layer, std::size_t module, const torch::Tensor& x,
                                       torch::Tensor y) {
  const auto& a = a_[layer][module];
  if (!a.defined()) return y;
  auto in = x;
  if (options_.dropout > 0 && is_training()) in = torch::dropout(in, options_.dropout, /*train=*/true);
  const auto& b = b_[layer][module];
  // Under autocast the matmuls run in bf16; otherwise in the adapters' dtype.
  auto h = torch::nn::functional::linear(in.to(a.scalar_type()), a);
  return y.add_(torch::nn::functional::linear(h, b), options_.scale());
}

torch::Tensor lora_adapters::merged_update(std::size_t layer, std::size_t module) const {
  const auto& a = a_[layer][module];
  if (!a.defined()) return {};
  return torch::matmul(b_[layer][module].to(torch::kFloat32), a.to(torch::kFloat32)) * options_.scale();
}

result<std::shared_ptr<lora_adapters>> add_lora(causal_lm& model, const lora_options& options, std::uint64_t seed) {
  CRUCIBLE_TRY(validate(options));
  if (!options.enabled()) return make_error(errc::invalid_argument, "lora rank: must be at least 1 for adapters");
  try {
    auto adapters = std::make_shared<lora_adapters>(model.config(), options, model.device(), model.compute_dtype(), seed);
    model.set_adapters(adapters);
    return adapters;
  } catch (const c10::Error& e) {
    return make_error(errc::internal, std::string("lora: LibTorch: ") + e.what_without_backtrace());
  }
}

std::shared_ptr<lora_adapters> copy_adapters(const lora_adapters& from) {
  torch::Tensor any;
  for (std::size_t m = 0; m < lora_module_count && !any.defined(); ++m) any = from.a(0, m);
  CRUCIBLE_CHECK(any.defined(), "copy_adapters: adapters without tensors");
  auto copy = std::make_shared<lora_adapters>(from.config(), from.options(), any.device(), any.scalar_type(), 0);
  torch::NoGradGuard no_grad;
  auto source = from.named_parameters();
  for (auto& item : copy->named_parameters()) item.value().copy_(*source.find(item.key()));
  return copy;
}

adapter_tensors adapter_tensor_views(const lora_adapters& adapters, dtype type) {
  adapter_tensors out;
  torch::NoGradGuard no_grad;
  for (const auto& item : adapters.named_parameters()) {
    auto t = item.value().detach().to(torch::kCPU, to_torch(type)).contiguous();
    tensor_view v;
    v.name = item.key();
    v.type = type;
    v.shape.assign(t.sizes().begin(), t.sizes().end());
    v.bytes = {static_cast<const std::byte*>(t.data_ptr()), static_cast<std::size_t>(t.nbytes())};
    out.host.push_back(std::move(t));
    out.views.push_back(std::move(v));
  }
  return out;
}

status save_adapters(const lora_adapters& adapters, const fs::path& dir, const std::string& base_model, dtype type) {
  adapter_tensors tensors;
  try {
    tensors = adapter_tensor_views(adapters, type);
  } catch (const c10::Error& e) {
    return make_error(errc::internal, dir.string() + ": LibTorch: " + e.what_without_backtrace());
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(errc::io, dir.string() + ": cannot create: " + ec.message());
  CRUCIBLE_TRY(write_safetensors(dir / "adapter_model.safetensors", tensors.views));
  return write_file(dir / "adapter_config.json", peft_adapter_config(adapters.options(), base_model));
}

status load_adapters(causal_lm& model, const fs::path& dir) try {
  auto options = read_peft_adapter_config(dir / "adapter_config.json");
  if (!options) return options.error();
  const fs::path file = dir / "adapter_model.safetensors";
  auto weights = safetensors_file::open(file);
  if (!weights) return weights.error();
  auto target = model.adapters();
  const bool same = target && target->options().rank == options->rank && target->options().alpha == options->alpha &&
                    target->options().targets == options->targets;
  std::shared_ptr<lora_adapters> fresh;
  if (!same) {
    fresh = std::make_shared<lora_adapters>(model.config(), *options, model.device(), model.compute_dtype(), 0);
    target = fresh;
  }
  torch::NoGradGuard no_grad;
  std::size_t used = 0;
  for (auto& item : target->named_parameters()) {
    const tensor_view* t = weights->find(item.key());
    torch::Tensor& param = item.value();
    if (!t) return make_error(errc::corrupt, file.string() + ": no tensor " + item.key() + " (" + options->text() + ")");
    if (t->type != dtype::f32 && t->type != dtype::bf16 && t->type != dtype::f16)
      return make_error(errc::corrupt, file.string() + ": tensor " + t->text() + ": supported dtypes are F32, BF16, F16");
    if (torch::IntArrayRef(t->shape) != param.sizes())
      return make_error(errc::corrupt, file.string() + ": tensor " + t->text() + " should have the shape of " +
                                           item.key() + " in this model");
    auto staged = torch::empty(param.sizes(), torch::TensorOptions().dtype(to_torch(t->type)));
    std::memcpy(staged.data_ptr(), t->bytes.data(), t->bytes.size());
    param.copy_(staged);
    ++used;
  }
  if (used != weights->tensors().size()) {
    for (const auto& t : weights->tensors())
      if (!target->named_parameters().find(t.name))
        return make_error(errc::corrupt, file.string() + ": tensor " + t.name + " has no place in this model (" +
                                             options->text() + ", " + std::to_string(model.config().num_hidden_layers) +
                                             " layers)");
  }
  if (fresh) model.set_adapters(fresh);
  return status::success();
} catch (const c10::Error& e) {
  return make_error(errc::internal, dir.string() + ": LibTorch: " + e.what_without_backtrace());
}

status policy::load_adapters(const fs::path& dir) const { return crucible::policy::load_adapters(*model_, dir); }
void policy::merge_adapters() const { crucible::policy::merge_adapters(*model_); }

status write_fresh_adapters(const policy& p, const lora_options& options, std::uint64_t seed, double b_std,
                            const fs::path& dir, const std::string& base_model) {
  auto adapters = add_lora(*p.model(), options, seed);
  if (!adapters) return adapters.error();
  if (b_std > 0) {
    torch::NoGradGuard no_grad;
    auto gen = at::detail::createCPUGenerator(seed + 1);
    for (auto& item : (*adapters)->named_parameters())
      if (item.key().find("lora_B") != std::string::npos)
        item.value().copy_(b_std * torch::randn(item.value().sizes(), gen, torch::TensorOptions().dtype(torch::kFloat32)));
  }
  return save_adapters(**adapters, dir, base_model);
}

void merge_adapters(causal_lm& model) {
  auto adapters = model.adapters();
  if (!adapters) return;
  torch::NoGradGuard no_grad;
  auto params = model.named_parameters();
  for (std::int64_t layer = 0; layer < adapters->layers(); ++layer) {
    for (std::size_t m = 0; m < lora_module_count; ++m) {
      auto update = adapters->merged_update(static_cast<std::size_t>(layer), m);
      if (!update.defined()) continue;
      auto* w = params.find("model.layers." + std::to_string(layer) + "." + lora_module_path(m) + ".weight");
      CRUCIBLE_CHECK(w != nullptr, "merge_adapters: the model has no such projection");
      w->copy_((w->to(torch::kFloat32) + update).to(w->scalar_type()));
    }
  }
  model.set_adapters(nullptr);
}

}  // namespace crucible::policy
