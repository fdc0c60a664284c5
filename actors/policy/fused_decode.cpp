// causal_lm::decode_step on CUDA with the fused kernels of decode_kernels.hpp:
// per layer the q/k/v, o, gate/up and down matrix products (and the logits)
// are small_product at batch 1 where it pays (product() below) and
// LibTorch's (cuBLAS) elsewhere or with adapters; everything between them
// is one kernel each (RMSNorm with the residual add before it, RoPE with
// the cache write, the attention in two, SwiGLU's product): about 10
// kernels a layer where the LibTorch decode step launches about 40.
// decode_runner captures it as a CUDA graph like the other. Without the
// kernels in the build (CPU, Debian's LibTorch), fused_decode_available()
// is false and decode_step never comes here.
#include "actors/policy/causal_lm.hpp"
#include "actors/policy/decoder_layer.hpp"

#if CRUCIBLE_DECODE_KERNELS
#include <ATen/cuda/CUDAContext.h>

#include <cmath>

#include "actors/policy/decode_kernels.hpp"
#endif

namespace crucible::policy {

#if CRUCIBLE_DECODE_KERNELS
namespace {
namespace dk = decode_kernels;

dk::element element_of(torch::ScalarType type) {
  switch (type) {
    case torch::kFloat32: return dk::element::f32;
    case torch::kBFloat16: return dk::element::bf16;
    case torch::kFloat16: return dk::element::f16;
    default: break;
  }
  TORCH_CHECK(false, "fused decode: compute dtype ", type, " is not f32, bf16 or f16");
}

void launched(const char* error, const char* kernel) {
  TORCH_CHECK(error == nullptr, "fused decode: ", kernel, ": ", error ? error : "");
}

// x [rows, k] w^T (+ b): small_product at one row where it has at least as
// many columns n as elements k, else LibTorch's linear; fp32_out for the
// logits. On an H100 (tools/gpu/decode_step_probe.py, Qwen2.5-0.5B's
// shapes, docs/benchmarks.md) small_product took 0.59x cuBLAS's time for
// q/k/v, 0.63x for o, 0.95x for gate/up and 0.91x for the logits; at 8
// rows about 2x for every product. The n >= k cut came from a first
// version whose down projection (k 4864, n 896) read SwiGLU in place at 2x
// cuBLAS's time; the plain one took 0.93x in the last run, so the cut is
// conservative (dropping it is the next thing to measure).
torch::Tensor product(dk::element type, const torch::Tensor& x, const torch::Tensor& w, const torch::Tensor& b,
                      void* stream, bool fp32_out = false) {
  const int rows = static_cast<int>(x.size(0)), k = static_cast<int>(x.size(1)), n = static_cast<int>(w.size(0));
  if (n < k || !x.is_contiguous() || !w.is_contiguous() ||
      !dk::small_product_fits(type, rows, k, x.data_ptr(), w.data_ptr())) {
    auto y = linear(x, w, b);
    return fp32_out ? y.to(torch::kFloat32) : y;
  }
  auto y = torch::empty({rows, n}, x.options().dtype(fp32_out ? torch::kFloat32 : x.scalar_type()));
  launched(dk::small_product(type, x.data_ptr(), w.data_ptr(), b.defined() ? b.data_ptr() : nullptr, y.data_ptr(),
                             fp32_out, rows, k, n, stream),
           "small_product");
  return y;
}
}  // namespace

bool causal_lm::fused_decode_available() const {
  const auto& c = config_;
  return device_.is_cuda() && c.num_attention_heads % c.num_key_value_heads == 0 &&
         c.num_attention_heads / c.num_key_value_heads <= dk::kMaxGroup && c.head_dim <= dk::kMaxHeadDim;
}

torch::Tensor causal_lm::fused_decode_step(const torch::Tensor& ids, const torch::Tensor& positions,
                                           const torch::Tensor& slot, const torch::Tensor& key_mask,
                                           kv_cache& cache) {
  const auto& c = config_;
  const int batch = static_cast<int>(ids.size(0)), hidden = static_cast<int>(c.hidden_size);
  const int heads = static_cast<int>(c.num_attention_heads), kv_heads = static_cast<int>(c.num_key_value_heads);
  const int d = static_cast<int>(c.head_dim), inter = static_cast<int>(c.intermediate_size);
  const int capacity = static_cast<int>(cache.capacity);
  TORCH_CHECK(ids.dim() == 2 && ids.size(1) == 1, "decode_step feeds one token per row");
  TORCH_CHECK(key_mask.size(0) == batch && key_mask.size(1) == capacity && key_mask.is_contiguous() &&
                  key_mask.scalar_type() == torch::kBool,
              "key_mask must be a contiguous bool [batch, capacity]");
  TORCH_CHECK(positions.numel() == batch && positions.is_contiguous() && slot.numel() == 1,
              "positions must be [batch, 1] and slot [1]");
  const auto type = element_of(dtype_);
  void* stream = at::cuda::getCurrentCUDAStream(device_.index()).stream();
  const float eps = static_cast<float>(c.rms_norm_eps), scale = 1.0f / std::sqrt(static_cast<float>(d));
  const auto* pos = positions.data_ptr<std::int64_t>();
  const auto* at = slot.data_ptr<std::int64_t>();
  // The fused projections carry no adapters: with adapters, one per projection.
  const bool fused_projections = !active_adapters();

  auto x = torch::embedding(embed_tokens_, ids).view({batch, hidden});  // the residual stream
  auto h = torch::empty_like(x);                                         // x normalised
  auto q = torch::empty({batch, heads * d}, x.options());
  auto attended = torch::empty({batch, heads * d}, x.options());
  auto act = torch::empty({batch, inter}, x.options());
  auto scratch = torch::empty({static_cast<std::int64_t>(dk::decode_attention_scratch(batch, heads, d, capacity))},
                              x.options().dtype(torch::kFloat32));
  launched(dk::add_rms_norm(type, x.data_ptr(), nullptr, layers_[0]->input_norm.data_ptr(), h.data_ptr(), batch,
                            hidden, eps, stream),
           "add_rms_norm");
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    auto& l = *layers_[i];
    auto qkv = fused_projections && l.qkv_w.defined()
                   ? product(type, h, l.qkv_w, l.qkv_b, stream)
                   : torch::cat({project(i, 0, h, l.q_w, l.q_b), project(i, 1, h, l.k_w, l.k_b),
                                 project(i, 2, h, l.v_w, l.v_b)},
                                -1);
    qkv = qkv.contiguous();
    launched(dk::rope_cache(type, qkv.data_ptr(), pos, at, inv_freq_.data_ptr<float>(), q.data_ptr(),
                            cache.keys[i].data_ptr(), cache.values[i].data_ptr(), batch, heads, kv_heads, d, capacity,
                            stream),
             "rope_cache");
    launched(dk::decode_attention(type, q.data_ptr(), cache.keys[i].data_ptr(), cache.values[i].data_ptr(),
                                  key_mask.data_ptr<bool>(), at, attended.data_ptr(), scratch.data_ptr<float>(), batch,
                                  heads, kv_heads, d, capacity, scale, stream),
             "decode_attention");
    auto o = (fused_projections ? product(type, attended, l.o_w, l.o_b, stream)
                                : project(i, 3, attended, l.o_w, l.o_b))
                 .contiguous();
    launched(dk::add_rms_norm(type, x.data_ptr(), o.data_ptr(), l.post_norm.data_ptr(), h.data_ptr(), batch, hidden,
                              eps, stream),
             "add_rms_norm");
    auto gate_up = fused_projections && l.gate_up_w.defined()
                       ? product(type, h, l.gate_up_w, l.gate_up_b, stream)
                       : torch::cat({project(i, 4, h, l.gate_w, l.gate_b), project(i, 5, h, l.up_w, l.up_b)}, -1);
    gate_up = gate_up.contiguous();
    launched(dk::silu_mul(type, gate_up.data_ptr(), act.data_ptr(), batch, inter, stream), "silu_mul");
    auto down = (fused_projections ? product(type, act, l.down_w, l.down_b, stream)
                                   : project(i, 6, act, l.down_w, l.down_b))
                    .contiguous();
    // The residual add, then the next layer's input norm (the final norm after the last).
    const auto& next_norm = i + 1 < layers_.size() ? layers_[i + 1]->input_norm : final_norm_;
    launched(dk::add_rms_norm(type, x.data_ptr(), down.data_ptr(), next_norm.data_ptr(), h.data_ptr(), batch, hidden,
                              eps, stream),
             "add_rms_norm");
  }
  return product(type, h, lm_head_, torch::Tensor(), stream, /*fp32_out=*/true);
}

std::pair<torch::Tensor, torch::Tensor> fused_choose(const torch::Tensor& logits, double temperature,
                                                     const torch::Tensor& uniform) {
  if (!logits.is_cuda()) return {};
  TORCH_CHECK(logits.dim() == 2 && logits.scalar_type() == torch::kFloat32, "fused choose: logits must be fp32 [batch, vocab]");
  const auto rows = logits.contiguous();
  const int batch = static_cast<int>(rows.size(0)), vocab = static_cast<int>(rows.size(1));
  torch::Tensor u;
  if (uniform.defined()) {
    u = uniform.to(rows.device(), torch::kFloat32).contiguous();
    TORCH_CHECK(u.numel() == batch, "fused choose: one uniform per row");
  }
  auto tokens = torch::empty({batch}, rows.options().dtype(torch::kInt64));
  auto logprobs = torch::empty({batch}, rows.options());
  auto scratch = torch::empty({static_cast<std::int64_t>(dk::choose_tokens_scratch(batch))}, rows.options());
  launched(dk::choose_tokens(rows.data_ptr<float>(), u.defined() ? u.data_ptr<float>() : nullptr,
                             static_cast<float>(temperature), tokens.data_ptr<std::int64_t>(),
                             logprobs.data_ptr<float>(), scratch.data_ptr<float>(), batch, vocab,
                             at::cuda::getCurrentCUDAStream(rows.device().index()).stream()),
           "choose_tokens");
  return {tokens, logprobs};
}

#else

bool causal_lm::fused_decode_available() const { return false; }

std::pair<torch::Tensor, torch::Tensor> fused_choose(const torch::Tensor&, double, const torch::Tensor&) { return {}; }

torch::Tensor causal_lm::fused_decode_step(const torch::Tensor&, const torch::Tensor&, const torch::Tensor&,
                                           const torch::Tensor&, kv_cache&) {
  TORCH_CHECK(false, "fused decode: this build has no fused decode kernels");
}

#endif

}  // namespace crucible::policy
