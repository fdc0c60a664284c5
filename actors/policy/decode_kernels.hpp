// The fused CUDA kernels of one decode step (issue 21 item 3): what
// causal_lm::decode_step runs on CUDA between its matrix products, one
// kernel where LibTorch's ops launch several.
//
//   add_rms_norm      the residual add and the next RMSNorm (8 or 9 kernels)
//   rope_cache        RoPE on the queries and keys, the new key and value
//                     written into the cache at the step's slot (about 8)
//   decode_attention  one query per row against the cache, split over
//                     chunks of keys, then the chunks combined (about 8)
//   silu_mul          SwiGLU's silu(gate) * up (2)
//   small_product     a matrix product of one row (decode_product.cu),
//                     where cuBLAS's skinny kernels spend more
//   choose_tokens     the next token, greedy or sampled, and its log-prob
//                     (about 10, outside the graph)
//
// Every kernel rounds as the LibTorch ops it replaces where those round to
// the compute dtype (the residual add, RMSNorm's cast before its weight,
// RoPE's products and sum, silu before the product), so that in fp32 it
// matches them to the last bits of a reduction's order; the attention keeps
// its scores and probabilities in fp32 where LibTorch's rounds them to bf16.
// Built only where LibTorch has CUDA and nvcc is found (CRUCIBLE_DECODE_KERNELS);
// called by fused_decode.cpp with device pointers and the current stream. No
// CUDA or LibTorch header here.
#pragma once

#include <cstddef>
#include <cstdint>

namespace crucible::policy::decode_kernels {

enum class element : int { f32, bf16, f16 };

// Limits of decode_attention: a group of query heads shares one key/value
// head, and its queries sit in shared memory.
constexpr int kMaxGroup = 16;       // num_attention_heads / num_key_value_heads
constexpr int kMaxHeadDim = 256;
constexpr int kKeysPerChunk = 128;  // keys one block of decode_attention reads

// Every launcher returns null when the launch went through, else CUDA's
// message. `stream` is a cudaStream_t.

// x [rows, n] (updated in place): x += delta first when delta is not null;
// out [rows, n] = RMSNorm(x) * weight, Hugging Face's arithmetic.
const char* add_rms_norm(element type, void* x, const void* delta, const void* weight, void* out, int rows, int n,
                         float eps, void* stream);

// qkv [batch, (heads + 2 kv_heads) * head_dim], q then k then v per row.
// Rotates q and k by RoPE at positions[b] (int64, one per row) with
// inv_freq [head_dim / 2] (fp32), writes q into q_out [batch, heads,
// head_dim] and k, v into keys/values [batch, kv_heads, capacity, head_dim]
// at cache slot *slot (int64 on the device).
const char* rope_cache(element type, const void* qkv, const std::int64_t* positions, const std::int64_t* slot,
                       const float* inv_freq, void* q_out, void* keys, void* values, int batch, int heads,
                       int kv_heads, int head_dim, int capacity, void* stream);

// Floats of scratch decode_attention needs for these sizes.
std::size_t decode_attention_scratch(int batch, int heads, int head_dim, int capacity);

// out [batch, heads * head_dim] = softmax(q k^T * scale) v over the cache
// slots s <= *slot with key_mask[b, s] (bool [batch, capacity]); query head h
// reads key/value head h / (heads / kv_heads). `scratch` holds
// decode_attention_scratch floats on the device.
const char* decode_attention(element type, const void* q, const void* keys, const void* values, const bool* key_mask,
                             const std::int64_t* slot, void* out, float* scratch, int batch, int heads, int kv_heads,
                             int head_dim, int capacity, float scale, void* stream);

// gate_up [rows, 2 inter] (gate, then up) -> out [rows, inter] = silu(gate) * up.
const char* silu_mul(element type, const void* gate_up, void* out, int rows, int inter, void* stream);

// True when small_product takes these: one row, of a multiple of 16
// bytes, x and w on 16-byte addresses. (Where it is also the faster way is
// fused_decode.cpp's rule, from decode_step_probe.py's figures.)
bool small_product_fits(element type, int rows, int k, const void* x, const void* w);

// y [1, n] = x [1, k] w^T (+ bias [n] when not null), w [n, k] as
// nn.Linear keeps it, accumulated in fp32 and rounded to the element type
// (as cuBLAS's product with its bias epilogue); y is fp32 when fp32_out (the
// logits: the rounded value widened, as LibTorch's .to(float) after it).
// Refused with a message where small_product_fits is false.
const char* small_product(element type, const void* x, const void* w, const void* bias, void* y, bool fp32_out,
                          int rows, int k, int n, void* stream);

// The next token of every row of logits [batch, vocab] (fp32): with uniform
// null, the first largest logit (greedy); else, with uniform [batch] (fp32 in
// [0, 1)), drawn from softmax(logits / temperature) by inverse CDF: the first
// token whose cumulative probability reaches uniform * the total. tokens
// [batch] int64; logprobs [batch] fp32, log_softmax(logits / temperature) at
// the token. What generate's choose computes in about ten LibTorch kernels
// when neither top_k nor top_p cuts the vocabulary. Greedy reads each row
// with 64 blocks and combines them (two kernels), sampling with one block a
// row. `scratch` holds choose_tokens_scratch(batch) floats on the device.
std::size_t choose_tokens_scratch(int batch);
const char* choose_tokens(const float* logits, const float* uniform, float temperature, std::int64_t* tokens,
                          float* logprobs, float* scratch, int batch, int vocab, void* stream);

}  // namespace crucible::policy::decode_kernels
