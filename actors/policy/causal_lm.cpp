#include "actors/policy/causal_lm.hpp"

#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/version.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>
#include <sstream>

#include "actors/policy/activation_checkpoint.hpp"
#include "actors/policy/checkpoint_weights.hpp"
#include "actors/policy/decoder_layer.hpp"
#include "actors/policy/lora_adapters.hpp"
#include "actors/policy/parameter_tree.hpp"
#include "runtime/base/write_file.hpp"

// scaled_dot_product_attention arrived in PyTorch 2.0.
#if defined(TORCH_VERSION_MAJOR) && TORCH_VERSION_MAJOR >= 2
#define CRUCIBLE_HAVE_SDPA 1
#else
#define CRUCIBLE_HAVE_SDPA 0
#endif
// Its enable_gqa argument (keys and values shared by groups of query heads,
// read in place) arrived in PyTorch 2.5.
#if CRUCIBLE_HAVE_SDPA && (TORCH_VERSION_MAJOR > 2 || TORCH_VERSION_MINOR >= 5)
#define CRUCIBLE_HAVE_SDPA_GQA 1
#else
#define CRUCIBLE_HAVE_SDPA_GQA 0
#endif

namespace crucible::policy {

namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

torch::Tensor add_parameter(torch::nn::Module& root, const std::string& dotted, torch::IntArrayRef shape,
                            const torch::TensorOptions& options) {
  return crucible::policy::add_parameter(root, dotted, torch::empty(shape, options));
}

// Row blocks of one new tensor of `rows` [sum(rows), cols...]: the blocks
// alias it but are independent leaves to autograd (detach), so that they can
// be registered as parameters.
std::pair<torch::Tensor, std::vector<torch::Tensor>> fused_rows(const std::vector<std::int64_t>& rows,
                                                                torch::IntArrayRef tail,
                                                                const torch::TensorOptions& options) {
  std::int64_t total = 0;
  for (auto r : rows) total += r;
  std::vector<std::int64_t> shape{total};
  shape.insert(shape.end(), tail.begin(), tail.end());
  auto whole = torch::empty(shape, options);
  std::vector<torch::Tensor> blocks;
  std::int64_t start = 0;
  for (auto r : rows) {
    blocks.push_back(whole.narrow(0, start, r).detach());
    start += r;
  }
  return {whole, blocks};
}

std::string shape_text(torch::IntArrayRef shape) {
  std::ostringstream s;
  s << "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s << (i ? ", " : "") << shape[i];
  s << "]";
  return s.str();
}

torch::ScalarType default_dtype(const torch::Device& device, const std::optional<dtype>& wanted) {
  if (wanted) return to_torch(*wanted);
  return device.is_cuda() ? torch::kBFloat16 : torch::kFloat32;
}

// Hugging Face's RMSNorm: normalise in fp32, cast back, then scale.
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  auto h = x.to(torch::kFloat32);
  h = h * torch::rsqrt(h.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return weight * h.to(x.scalar_type());
}

torch::Tensor rotate_half(const torch::Tensor& x) {
  const auto half = x.size(-1) / 2;
  return torch::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
}

}  // namespace

torch::ScalarType to_torch(dtype type) {
  switch (type) {
    case dtype::f32: return torch::kFloat32;
    case dtype::bf16: return torch::kBFloat16;
    case dtype::f16: return torch::kFloat16;
    default: break;
  }
  check_failed("type is f32, bf16 or f16", __FILE__, __LINE__, "the policy computes in F32, BF16 or F16 only");
}

causal_lm::causal_lm(model_config config, const model_placement& placement)
    : config_(std::move(config)),
      device_(placement.device),
      dtype_(default_dtype(device_, placement.compute_dtype)) {
  const auto opts = torch::TensorOptions().dtype(dtype_).device(device_);
  const auto& c = config_;
  const std::int64_t q_out = c.num_attention_heads * c.head_dim, kv_out = c.num_key_value_heads * c.head_dim;
  embed_tokens_ = add_parameter(*this, "model.embed_tokens.weight", {c.vocab_size, c.hidden_size}, opts);
  const bool fuse = device_.is_cuda();
  for (std::int64_t i = 0; i < c.num_hidden_layers; ++i) {
    const std::string p = "model.layers." + std::to_string(i) + ".";
    auto layer = std::make_shared<decoder_layer>();
    auto add = [&](const std::string& name, torch::IntArrayRef shape) { return add_parameter(*this, p + name, shape, opts); };
    auto add_t = [&](const std::string& name, torch::Tensor t) { return add_parameter(*this, p + name, std::move(t)); };
    layer->input_norm = add("input_layernorm.weight", {c.hidden_size});
    if (fuse) {
      auto [w, blocks] = fused_rows({q_out, kv_out, kv_out}, {c.hidden_size}, opts);
      layer->qkv_w = w;
      layer->q_w = add_t("self_attn.q_proj.weight", blocks[0]);
      layer->k_w = add_t("self_attn.k_proj.weight", blocks[1]);
      layer->v_w = add_t("self_attn.v_proj.weight", blocks[2]);
    } else {
      layer->q_w = add("self_attn.q_proj.weight", {q_out, c.hidden_size});
      layer->k_w = add("self_attn.k_proj.weight", {kv_out, c.hidden_size});
      layer->v_w = add("self_attn.v_proj.weight", {kv_out, c.hidden_size});
    }
    if (c.attention_bias && fuse) {
      auto [b, blocks] = fused_rows({q_out, kv_out, kv_out}, {}, opts);
      layer->qkv_b = b;
      layer->q_b = add_t("self_attn.q_proj.bias", blocks[0]);
      layer->k_b = add_t("self_attn.k_proj.bias", blocks[1]);
      layer->v_b = add_t("self_attn.v_proj.bias", blocks[2]);
    } else if (c.attention_bias) {
      layer->q_b = add("self_attn.q_proj.bias", {q_out});
      layer->k_b = add("self_attn.k_proj.bias", {kv_out});
      layer->v_b = add("self_attn.v_proj.bias", {kv_out});
    }
    layer->o_w = add("self_attn.o_proj.weight", {c.hidden_size, q_out});
    if (c.o_proj_bias) layer->o_b = add("self_attn.o_proj.bias", {c.hidden_size});
    layer->post_norm = add("post_attention_layernorm.weight", {c.hidden_size});
    if (fuse) {
      auto [w, blocks] = fused_rows({c.intermediate_size, c.intermediate_size}, {c.hidden_size}, opts);
      layer->gate_up_w = w;
      layer->gate_w = add_t("mlp.gate_proj.weight", blocks[0]);
      layer->up_w = add_t("mlp.up_proj.weight", blocks[1]);
    } else {
      layer->gate_w = add("mlp.gate_proj.weight", {c.intermediate_size, c.hidden_size});
      layer->up_w = add("mlp.up_proj.weight", {c.intermediate_size, c.hidden_size});
    }
    layer->down_w = add("mlp.down_proj.weight", {c.hidden_size, c.intermediate_size});
    if (c.mlp_bias && fuse) {
      auto [b, blocks] = fused_rows({c.intermediate_size, c.intermediate_size}, {}, opts);
      layer->gate_up_b = b;
      layer->gate_b = add_t("mlp.gate_proj.bias", blocks[0]);
      layer->up_b = add_t("mlp.up_proj.bias", blocks[1]);
      layer->down_b = add("mlp.down_proj.bias", {c.hidden_size});
    } else if (c.mlp_bias) {
      layer->gate_b = add("mlp.gate_proj.bias", {c.intermediate_size});
      layer->up_b = add("mlp.up_proj.bias", {c.intermediate_size});
      layer->down_b = add("mlp.down_proj.bias", {c.hidden_size});
    }
    layers_.push_back(std::move(layer));
  }
  final_norm_ = add_parameter(*this, "model.norm.weight", {c.hidden_size}, opts);
  lm_head_ = c.tie_word_embeddings ? embed_tokens_
                                   : add_parameter(*this, "lm_head.weight", {c.vocab_size, c.hidden_size}, opts);
  // As transformers: 1 / theta^(2i / head_dim), computed in fp32.
  const auto f32 = torch::TensorOptions().dtype(torch::kFloat32).device(device_);
  inv_freq_ = 1.0 / torch::pow(torch::full({}, c.rope_theta, f32),
                               torch::arange(0, c.head_dim, 2, f32.dtype(torch::kInt64)).to(torch::kFloat32) /
                                   static_cast<double>(c.head_dim));
}

kv_cache causal_lm::make_cache(std::int64_t batch, std::int64_t capacity) const {
  kv_cache cache;
  cache.capacity = capacity;
  const auto opts = torch::TensorOptions().dtype(dtype_).device(device_);
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    cache.keys.push_back(torch::zeros({batch, config_.num_key_value_heads, capacity, config_.head_dim}, opts));
    cache.values.push_back(torch::zeros({batch, config_.num_key_value_heads, capacity, config_.head_dim}, opts));
  }
  return cache;
}

torch::Tensor positions_from_mask(const torch::Tensor& mask) {
  auto m = mask.to(torch::kInt64);
  return (m.cumsum(-1) - 1).clamp_min(0) * m;
}

torch::Tensor causal_lm::hidden_states(const torch::Tensor& input_ids, const torch::Tensor& position_ids,
                                       const torch::Tensor& key_mask, kv_cache* cache) {
  const std::int64_t batch = input_ids.size(0), tokens = input_ids.size(1);
  const std::int64_t offset = cache ? cache->length : 0, keys = offset + tokens;
  CRUCIBLE_CHECK(key_mask.size(0) == batch && key_mask.size(1) == keys, "key_mask must be [batch, cached + tokens]");
  CRUCIBLE_CHECK(!cache || keys <= cache->capacity, "kv_cache capacity exceeded");

  auto x = torch::embedding(embed_tokens_, input_ids.to(device_));
  // RoPE tables [batch, 1, tokens, head_dim] in fp32, cast to the compute dtype.
  auto freqs = position_ids.to(device_).to(torch::kFloat32).unsqueeze(-1) * inv_freq_;
  auto emb = torch::cat({freqs, freqs}, -1);
  auto cos = emb.cos().to(dtype_).unsqueeze(1), sin = emb.sin().to(dtype_).unsqueeze(1);
  // Allowed (query, key) pairs [batch, 1, tokens, keys]: causal, not padding,
  // and always the token itself, so that padding rows stay finite.
  const auto long_opts = torch::TensorOptions().dtype(torch::kInt64).device(device_);
  auto q_slot = torch::arange(offset, keys, long_opts).unsqueeze(1);
  auto k_slot = torch::arange(0, keys, long_opts).unsqueeze(0);
  auto mask = (k_slot <= q_slot).unsqueeze(0) & key_mask.to(device_).to(torch::kBool).unsqueeze(1);
  mask = (mask | (k_slot == q_slot).unsqueeze(0)).unsqueeze(1);
#if CRUCIBLE_HAVE_SDPA
  // No cache and no padding (the learner's batches of equal lengths): plain
  // causal attention, which CUDA's flash kernel takes without a mask tensor
  // (an undefined mask tells attention() so).
  if (!cache && device_.is_cuda() && tokens > 1 && key_mask.to(torch::kBool).all().item<bool>()) mask = torch::Tensor();
#endif

  const bool checkpointed = checkpointing_ && !cache && torch::GradMode::is_enabled();
  for (std::size_t i = 0; i < layers_.size(); ++i)
    x = checkpointed ? checkpointed_layer(*this, i, x, cos, sin, mask) : layer(i, x, cos, sin, mask, cache);
  if (cache) cache->length = keys;
  (void)batch;
  return rms_norm(x, final_norm_, config_.rms_norm_eps);
}

torch::Tensor causal_lm::layer(std::size_t i, const torch::Tensor& x_in, const torch::Tensor& cos,
                               const torch::Tensor& sin, const torch::Tensor& mask, kv_cache* cache) {
  auto& l = *layers_[i];
  auto x = x_in + attention(l, rms_norm(x_in, l.input_norm, config_.rms_norm_eps), cos, sin, mask, cache, i);
  auto h = rms_norm(x, l.post_norm, config_.rms_norm_eps);
  auto act = torch::silu(project(i, 4, h, l.gate_w, l.gate_b)) * project(i, 5, h, l.up_w, l.up_b);
  return x + project(i, 6, act, l.down_w, l.down_b);
}

torch::Tensor causal_lm::attention(decoder_layer& layer, const torch::Tensor& x, const torch::Tensor& cos,
                                   const torch::Tensor& sin, const torch::Tensor& mask, kv_cache* cache,
                                   std::size_t index) {
  const std::int64_t batch = x.size(0), tokens = x.size(1), d = config_.head_dim;
  const std::int64_t heads = config_.num_attention_heads, kv_heads = config_.num_key_value_heads;
  const std::int64_t group = heads / kv_heads;
  auto q = project(index, 0, x, layer.q_w, layer.q_b).view({batch, tokens, heads, d}).transpose(1, 2);
  auto k = project(index, 1, x, layer.k_w, layer.k_b).view({batch, tokens, kv_heads, d}).transpose(1, 2);
  auto v = project(index, 2, x, layer.v_w, layer.v_b).view({batch, tokens, kv_heads, d}).transpose(1, 2);
  q = q * cos + rotate_half(q) * sin;
  k = k * cos + rotate_half(k) * sin;
  if (cache) {
    const std::int64_t offset = cache->length;
    cache->keys[index].narrow(2, offset, tokens).copy_(k);
    cache->values[index].narrow(2, offset, tokens).copy_(v);
    k = cache->keys[index].narrow(2, 0, offset + tokens);
    v = cache->values[index].narrow(2, 0, offset + tokens);
  }
  const std::int64_t keys = k.size(2);
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  torch::Tensor out;  // [batch, heads, tokens, d]
#if CRUCIBLE_HAVE_SDPA
  if (device_.is_cuda() && tokens > 1) {
#if CRUCIBLE_HAVE_SDPA_GQA
    // Causal without padding (the learner's batches): the flash kernel reads
    // each key/value head for its group of query heads, nothing repeated.
    if (!mask.defined())
      out = at::scaled_dot_product_attention(q, k, v, {}, 0.0, /*is_causal=*/true, std::nullopt, /*enable_gqa=*/true);
#endif
    if (!out.defined()) {
      // Prefill on CUDA: the fused kernel, with keys/values repeated per group.
      auto kr = k.unsqueeze(2).expand({batch, kv_heads, group, keys, d}).reshape({batch, heads, keys, d});
      auto vr = v.unsqueeze(2).expand({batch, kv_heads, group, keys, d}).reshape({batch, heads, keys, d});
      out = mask.defined() ? at::scaled_dot_product_attention(q, kr, vr, mask, 0.0, false)
                           : at::scaled_dot_product_attention(q, kr, vr, {}, 0.0, /*is_causal=*/true);
    }
  }
#endif
  if (!out.defined()) {
    // Queries grouped per key/value head, so keys and values are read once
    // and never copied: [batch, kv_heads, group * tokens, d].
    auto qg = q.reshape({batch, kv_heads, group * tokens, d});
    auto scores = torch::matmul(qg, k.transpose(-2, -1)).mul(scale).view({batch, kv_heads, group, tokens, keys});
    scores = scores.to(torch::kFloat32).masked_fill(mask.unsqueeze(1).logical_not(),
                                                    -std::numeric_limits<float>::infinity());
    auto probs = scores.softmax(-1).to(dtype_).view({batch, kv_heads, group * tokens, keys});
    out = torch::matmul(probs, v).view({batch, heads, tokens, d});
  }
  out = out.transpose(1, 2).reshape({batch, tokens, heads * d});
  return project(index, 3, out, layer.o_w, layer.o_b);
}

torch::Tensor causal_lm::decode_step(const torch::Tensor& ids, const torch::Tensor& positions, const torch::Tensor& slot,
                                     const torch::Tensor& key_mask, kv_cache& cache, bool fused_kernels) {
  if (fused_kernels && fused_decode_available()) return fused_decode_step(ids, positions, slot, key_mask, cache);
  const auto& c = config_;
  const std::int64_t batch = ids.size(0), capacity = cache.capacity, d = c.head_dim;
  const std::int64_t heads = c.num_attention_heads, kv_heads = c.num_key_value_heads, group = heads / kv_heads;
  const std::int64_t q_out = heads * d, kv_out = kv_heads * d;
  CRUCIBLE_CHECK(ids.dim() == 2 && ids.size(1) == 1, "decode_step feeds one token per row");
  CRUCIBLE_CHECK(key_mask.size(0) == batch && key_mask.size(1) == capacity, "key_mask must be [batch, capacity]");

  auto x = torch::embedding(embed_tokens_, ids);  // [batch, 1, hidden]
  // RoPE tables [batch, 1, 1, head_dim], broadcast over the heads.
  auto freqs = positions.to(torch::kFloat32).unsqueeze(-1) * inv_freq_;
  auto emb = torch::cat({freqs, freqs}, -1);
  auto cos = emb.cos().to(dtype_).unsqueeze(2), sin = emb.sin().to(dtype_).unsqueeze(2);
  // Additive mask [batch, 1, 1, capacity]: 0 for real slots up to this one, -inf elsewhere.
  auto slots = torch::arange(capacity, positions.options());
  auto allowed = key_mask & slots.le(slot).unsqueeze(0);
  auto bias = torch::zeros({batch, capacity}, positions.options().dtype(torch::kFloat32))
                  .masked_fill(allowed.logical_not(), -std::numeric_limits<float>::infinity())
                  .view({batch, 1, 1, capacity});
  const double scale = 1.0 / std::sqrt(static_cast<double>(d));
  const lora_adapters* adapters = active_adapters();

  for (std::size_t i = 0; i < layers_.size(); ++i) {
    auto& layer = *layers_[i];
    auto h = rms_norm(x, layer.input_norm, c.rms_norm_eps);
    // The fused projections carry no adapters: with adapters, one per projection.
    const bool fused = !adapters;
    auto qkv = fused && layer.qkv_w.defined()
                   ? linear(h, layer.qkv_w, layer.qkv_b)
                   : torch::cat({project(i, 0, h, layer.q_w, layer.q_b), project(i, 1, h, layer.k_w, layer.k_b),
                                 project(i, 2, h, layer.v_w, layer.v_b)},
                                -1);  // [batch, 1, q_out + 2 kv_out]
    // Queries and keys rotated together: [batch, 1, heads + kv_heads, d].
    auto qk = qkv.narrow(-1, 0, q_out + kv_out).reshape({batch, 1, heads + kv_heads, d});
    qk = qk * cos + rotate_half(qk) * sin;
    auto q = qk.narrow(2, 0, heads);
    auto k = qk.narrow(2, heads, kv_heads).transpose(1, 2);  // [batch, kv_heads, 1, d]
    auto v = qkv.narrow(-1, q_out + kv_out, kv_out).reshape({batch, 1, kv_heads, d}).transpose(1, 2);
    cache.keys[i].index_copy_(2, slot, k);
    cache.values[i].index_copy_(2, slot, v);
    // Queries grouped per key/value head: [batch, kv_heads, group, d].
    auto qg = q.reshape({batch, kv_heads, group, d});
    auto scores = torch::matmul(qg, cache.keys[i].transpose(-2, -1)).mul(scale).to(torch::kFloat32) + bias;
    auto probs = scores.softmax(-1).to(dtype_);
    auto out = torch::matmul(probs, cache.values[i]).reshape({batch, 1, heads * d});
    x = x + project(i, 3, out, layer.o_w, layer.o_b);
    h = rms_norm(x, layer.post_norm, c.rms_norm_eps);
    torch::Tensor gate, up;
    if (fused && layer.gate_up_w.defined()) {
      auto gu = linear(h, layer.gate_up_w, layer.gate_up_b);
      gate = gu.narrow(-1, 0, c.intermediate_size);
      up = gu.narrow(-1, c.intermediate_size, c.intermediate_size);
    } else {
      gate = project(i, 4, h, layer.gate_w, layer.gate_b);
      up = project(i, 5, h, layer.up_w, layer.up_b);
    }
    x = x + project(i, 6, torch::silu(gate) * up, layer.down_w, layer.down_b);
  }
  return logits(rms_norm(x, final_norm_, c.rms_norm_eps).select(1, 0));
}

namespace {
thread_local bool base_only = false;  // a causal_lm::base_only_scope lives on this thread
}  // namespace

causal_lm::base_only_scope::base_only_scope() : previous_(std::exchange(base_only, true)) {}
causal_lm::base_only_scope::~base_only_scope() { base_only = previous_; }

lora_adapters* causal_lm::active_adapters() const { return base_only ? nullptr : adapters_.get(); }

void causal_lm::set_adapters(std::shared_ptr<lora_adapters> adapters) {
  adapters_ = std::move(adapters);
  std::lock_guard<std::mutex> lock(runners_mutex_);
  idle_runners_.clear();
}

torch::Tensor causal_lm::project(std::size_t layer, std::size_t module, const torch::Tensor& x, const torch::Tensor& w,
                                 const torch::Tensor& b) const {
  auto y = linear(x, w, b);
  if (auto* adapters = active_adapters()) y = adapters->add_delta(layer, module, x, std::move(y));
  return y;
}

torch::Tensor causal_lm::logits(const torch::Tensor& hidden) const { return raw_logits(hidden).to(torch::kFloat32); }

torch::Tensor causal_lm::raw_logits(const torch::Tensor& hidden) const {
  return torch::nn::functional::linear(hidden, lm_head_);
}

torch::Tensor token_logprobs(causal_lm& model, const torch::Tensor& input_ids, const torch::Tensor& attention_mask,
                             std::int64_t first_target, double temperature) {
  const std::int64_t tokens = input_ids.size(1);
  CRUCIBLE_CHECK(first_target >= 1 && first_target <= tokens, "first_target must be in [1, tokens]");
  CRUCIBLE_CHECK(temperature > 0, "temperature must be positive");
  auto hidden = model.hidden_states(input_ids, positions_from_mask(attention_mask), attention_mask);
  auto targets = input_ids.narrow(1, first_target, tokens - first_target).to(model.device()).to(torch::kInt64);
  auto h = hidden.narrow(1, first_target - 1, tokens - first_target);
  torch::Tensor logp;
  if (temperature == 1.0) {
    // log_softmax with an fp32 result. For fp16 logits on CUDA the upcast
    // happens inside the kernel (no fp32 copy of the [tokens, vocab] logits,
    // 3.7 GB for 6144 tokens of a 152k vocabulary); for bf16, ATen converts
    // them to fp32 first, as autocast or PyTorch's `.float()` would. Autocast
    // is left out for this one call either way.
    auto logits = model.raw_logits(h);
    c10::impl::ExcludeDispatchKeyGuard no_autocast(c10::autocast_dispatch_keyset);
    logp = torch::log_softmax(logits, -1, torch::kFloat32);
  } else {
    logp = torch::log_softmax(model.logits(h) / temperature, -1);
  }
  return logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1);
}

result<std::shared_ptr<causal_lm>> load_causal_lm(const fs::path& dir, const model_placement& placement) {
  const fs::path config_path = dir / "config.json";
  auto config = read_model_config(config_path);
  if (!config) return config.error();
  auto weights = checkpoint_weights::open(dir);
  if (!weights) return weights.error();
  std::string config_text;
  {
    std::ifstream in(config_path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    config_text = s.str();
  }
  try {
    torch::Device device(placement.device);
    if (device.is_cuda() && !torch::cuda::is_available()) {
      return make_error(errc::invalid_argument, "device " + placement.device + ": this LibTorch has no usable CUDA");
    }
    auto model = std::make_shared<causal_lm>(*config, placement);
    model->set_config_json(std::move(config_text));
    torch::NoGradGuard no_grad;
    std::set<std::string> used;
    for (auto& item : model->named_parameters()) {
      const std::string& name = item.key();
      torch::Tensor& param = item.value();
      const tensor_view* t = weights->find(name);
      if (!t) {
        return make_error(errc::corrupt, dir.string() + ": no tensor " + name + " in the safetensors files, but " +
                                             config_path.string() + " (" + config->text() + ") needs it");
      }
      if (t->type != dtype::f32 && t->type != dtype::bf16 && t->type != dtype::f16) {
        return make_error(errc::corrupt, dir.string() + ": tensor " + t->text() + " has dtype " +
                                             std::string(to_string(t->type)) + "; supported: F32, BF16, F16");
      }
      if (torch::IntArrayRef(t->shape) != param.sizes()) {
        return make_error(errc::corrupt, dir.string() + ": tensor " + t->text() + " should have shape " +
                                             shape_text(param.sizes()) + " by " + config_path.string() + " (" +
                                             config->text() + ")");
      }
      auto staged = torch::empty(param.sizes(), torch::TensorOptions().dtype(to_torch(t->type)));
      std::memcpy(staged.data_ptr(), t->bytes.data(), t->bytes.size());
      param.copy_(staged);
      used.insert(name);
    }
    for (const auto& name : weights->names()) {
      if (used.count(name)) continue;
      if (name == "lm_head.weight" && config->tie_word_embeddings) continue;  // a tied copy some tools save
      if (name.ends_with(".rotary_emb.inv_freq")) continue;                   // older transformers saved it
      return make_error(errc::corrupt, dir.string() + ": tensor " + name + " has no place in a " +
                                           std::string(to_string(config->arch)) + " model as " + config_path.string() +
                                           " describes it (" + config->text() + ")");
    }
    return model;
  } catch (const c10::Error& e) {
    return make_error(errc::invalid_argument, dir.string() + ": LibTorch: " + e.what_without_backtrace());
  }
}

namespace {

std::string dtype_name(dtype type) {
  switch (type) {
    case dtype::bf16: return "bfloat16";
    case dtype::f16: return "float16";
    default: return "float32";
  }
}

// A transformers config.json for `c` when none was loaded.
json config_to_json(const model_config& c) {
  const bool qwen = c.arch == architecture::qwen2;
  json j = {{"architectures", {qwen ? "Qwen2ForCausalLM" : "LlamaForCausalLM"}},
            {"model_type", qwen ? "qwen2" : "llama"},
            {"hidden_act", "silu"},
            {"hidden_size", c.hidden_size},
            {"intermediate_size", c.intermediate_size},
            {"num_hidden_layers", c.num_hidden_layers},
            {"num_attention_heads", c.num_attention_heads},
            {"num_key_value_heads", c.num_key_value_heads},
            {"head_dim", c.head_dim},
            {"vocab_size", c.vocab_size},
            {"max_position_embeddings", c.max_position_embeddings},
            {"rope_theta", c.rope_theta},
            {"rms_norm_eps", c.rms_norm_eps},
            {"tie_word_embeddings", c.tie_word_embeddings}};
  if (!qwen) {
    j["attention_bias"] = c.attention_bias;
    j["mlp_bias"] = c.mlp_bias;
  }
  if (c.bos_token_id) j["bos_token_id"] = *c.bos_token_id;
  if (c.eos_token_ids.size() == 1) j["eos_token_id"] = c.eos_token_ids[0];
  if (c.eos_token_ids.size() > 1) j["eos_token_id"] = c.eos_token_ids;
  return j;
}

}  // namespace

result<dtype> saved_dtype(const causal_lm& model, const save_options& options) {
  dtype out_type = dtype::f32;
  if (options.tensor_dtype) {
    out_type = *options.tensor_dtype;
  } else if (model.config().torch_dtype == "bfloat16") {
    out_type = dtype::bf16;
  } else if (model.config().torch_dtype == "float16") {
    out_type = dtype::f16;
  }
  if (out_type != dtype::f32 && out_type != dtype::bf16 && out_type != dtype::f16) {
    return make_error(errc::invalid_argument, "save dtype must be F32, BF16 or F16, not " + std::string(to_string(out_type)));
  }
  return out_type;
}

status save_causal_lm(const causal_lm& model, const fs::path& dir, const save_options& options) {
  auto saved = saved_dtype(model, options);
  if (!saved) return make_error(errc::invalid_argument, dir.string() + ": " + saved.error().message);
  const dtype out_type = *saved;
  std::vector<torch::Tensor> host;
  std::vector<tensor_view> views;
  try {
    torch::NoGradGuard no_grad;
    for (const auto& item : model.named_parameters()) {
      auto t = item.value().detach().to(torch::kCPU, to_torch(out_type)).contiguous();
      host.push_back(t);
      tensor_view v;
      v.name = item.key();
      v.type = out_type;
      v.shape.assign(t.sizes().begin(), t.sizes().end());
      v.bytes = {static_cast<const std::byte*>(t.data_ptr()), static_cast<std::size_t>(t.nbytes())};
      views.push_back(std::move(v));
    }
  } catch (const c10::Error& e) {
    return make_error(errc::internal, dir.string() + ": LibTorch: " + e.what_without_backtrace());
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(errc::io, dir.string() + ": cannot create: " + ec.message());
  // Stale shards of an earlier save would be listed by nothing but still confuse readers.
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".safetensors") fs::remove(entry.path(), ec);
  }
  CRUCIBLE_TRY(write_checkpoint_weights(dir, views, {.max_shard_bytes = options.max_shard_bytes}));
  return save_causal_lm_files(model, dir, out_type, options);
}

status save_causal_lm_files(const causal_lm& model, const fs::path& dir, dtype out_type, const save_options& options) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(errc::io, dir.string() + ": cannot create: " + ec.message());
  json config = model.config_json().empty() ? config_to_json(model.config())
                                            : json::parse(model.config_json(), nullptr, false);
  if (config.is_discarded()) config = config_to_json(model.config());
  if (config.contains("torch_dtype")) config["torch_dtype"] = dtype_name(out_type);
  if (config.contains("dtype") || !config.contains("torch_dtype")) config["dtype"] = dtype_name(out_type);
  CRUCIBLE_TRY(write_file(dir / "config.json", config.dump(2) + "\n"));
  if (options.tokenizer_from) {
    const auto& from = *options.tokenizer_from;
    if (!fs::exists(from / "tokenizer.json")) {
      return make_error(errc::not_found, (from / "tokenizer.json").string() + ": no tokenizer to copy");
    }
    for (const char* name : {"tokenizer.json", "tokenizer_config.json", "generation_config.json",
                             "special_tokens_map.json"}) {
      if (!fs::exists(from / name) || fs::equivalent(from, dir, ec)) continue;
      fs::copy_file(from / name, dir / name, fs::copy_options::overwrite_existing, ec);
      if (ec) return make_error(errc::io, (dir / name).string() + ": cannot copy: " + ec.message());
    }
  }
  return status::success();
}

}  // namespace crucible::policy
