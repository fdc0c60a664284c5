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
//   small_product     a matrix product of 1 to 8 rows (decode_product.cu),
//                     where cuBLAS's skinny kernels are far from the
//                     memory bandwidth; gated_small_product, the down
//                     projection with silu_mul read in place
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
constexpr int kMaxProductRows = 8;  // rows small_product takes
// normed_small_product's input, in shared memory: within the 48 KiB every
// CUDA device gives a block without asking, less the kernel's own few
// static bytes (Qwen2-7B's hidden 3584 fits at 6 rows).
constexpr int kMaxNormedBytes = 46 * 1024;

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

// True when small_product takes these: 1 to kMaxProductRows rows, k
// elements a row making a multiple of 16 bytes, x and w on 16 bytes.
bool small_product_fits(element type, int rows, int k, const void* x, const void* w);

// y [rows, n] = x [rows, k] w^T (+ bias [n] when not null), w [n, k] as
// nn.Linear keeps it, accumulated in fp32 and rounded to the element type
// (as cuBLAS's product with its bias epilogue); y is fp32 when fp32_out (the
// logits: the rounded value widened, as LibTorch's .to(float) after it).
// Refused with a message where small_product_fits is false.
const char* small_product(element type, const void* x, const void* w, const void* bias, void* y, bool fp32_out,
                          int rows, int k, int n, void* stream);

// The MLP's down projection with SwiGLU's product read in place: y [rows, n]
// = silu_mul(gate_up) w^T (+ bias), gate_up [rows, 2k], each input element
// rounded as silu_mul rounds it, so that the result is silu_mul's then
// small_product's without the [rows, k] tensor between them or its kernel.
const char* gated_small_product(element type, const void* gate_up, const void* w, const void* bias, void* y, int rows,
                                int k, int n, void* stream);

// True when normed_small_product takes these: small_product_fits, and the
// input's rows * k elements within kMaxNormedBytes.
bool normed_small_product_fits(element type, int rows, int k, const void* x, const void* w);

// add_rms_norm and the product after it in one kernel: y [rows, n] =
// (RMSNorm(x + delta) * norm_weight) w^T (+ bias), delta null for none,
// with add_rms_norm's rounding; x + delta is written to x_out, which must not
// be x (the kernel's blocks read x while one of them writes x_out). Every
// block normalises the rows itself, into shared memory.
const char* normed_small_product(element type, const void* x, const void* delta, const void* norm_weight, void* x_out,
                                 float eps, const void* w, const void* bias, void* y, bool fp32_out, int rows, int k,
                                 int n, void* stream);

// The next token of every row of logits [batch, vocab] (fp32): with uniform
// null, the first largest logit (greedy); else, with uniform [batch] (fp32 in
// [0, 1)), drawn from softmax(logits / temperature) by inverse CDF: the first
// token whose cumulative probability reaches uniform * the total. tokens
// [batch] int64; logprobs [batch] fp32, log_softmax(logits / temperature) at
// the token. What generate's choose computes in about ten LibTorch kernels
// when neither top_k nor top_p cuts the vocabulary.
const char* choose_tokens(const float* logits, const float* uniform, float temperature, std::int64_t* tokens,
                          float* logprobs, int batch, int vocab, void* stream);

}  // namespace crucible::policy::decode_kernels
