// The fused decode kernels (decode_kernels.hpp says what each computes and
// how it rounds). One template per kernel over the element type; the
// launchers at the end dispatch on decode_kernels::element.
#include "actors/policy/decode_kernels.hpp"

#include <algorithm>
#include <type_traits>

#include "actors/policy/decode_device.cuh"

namespace crucible::policy::decode_kernels {
namespace {

template <typename T>
__global__ void add_rms_norm_kernel(T* x, const T* delta, const T* weight, T* out, int n, float eps) {
  T* row = x + static_cast<size_t>(blockIdx.x) * n;
  const T* add = delta ? delta + static_cast<size_t>(blockIdx.x) * n : nullptr;
  T* normed = out + static_cast<size_t>(blockIdx.x) * n;
  float squares = 0.f;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    float v = to_float(row[i]);
    if (add) {
      v = round_to<T>(v + to_float(add[i]));
      row[i] = from_float<T>(v);
    }
    squares += v * v;
  }
  const float inv = rsqrtf(block_sum(squares) / static_cast<float>(n) + eps);
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    normed[i] = from_float<T>(to_float(weight[i]) * round_to<T>(to_float(row[i]) * inv));
}

template <typename T>
__global__ void rope_cache_kernel(const T* qkv, const std::int64_t* positions, const std::int64_t* slot,
                                  const float* inv_freq, T* q_out, T* keys, T* values, int heads, int kv_heads, int d,
                                  int capacity) {
  const int b = blockIdx.x, half = d / 2;
  const T* row = qkv + static_cast<size_t>(b) * (heads + 2 * kv_heads) * d;
  const float position = static_cast<float>(positions[b]);
  const std::int64_t at = *slot;
  // Pairs (j, j + half) of every query and key head: x * cos + rotate_half(x) * sin.
  for (int p = threadIdx.x; p < (heads + kv_heads) * half; p += blockDim.x) {
    const int h = p / half, j = p % half;
    const float f = position * inv_freq[j];
    const float c = round_to<T>(cosf(f)), s = round_to<T>(sinf(f));
    const float x1 = to_float(row[h * d + j]), x2 = to_float(row[h * d + j + half]);
    T* dst = h < heads ? q_out + (static_cast<size_t>(b) * heads + h) * d
                       : keys + ((static_cast<size_t>(b) * kv_heads + (h - heads)) * capacity + at) * d;
    dst[j] = from_float<T>(round_to<T>(x1 * c) + round_to<T>(-x2 * s));
    dst[j + half] = from_float<T>(round_to<T>(x2 * c) + round_to<T>(x1 * s));
  }
  for (int i = threadIdx.x; i < kv_heads * d; i += blockDim.x) {
    const int h = i / d, j = i % d;
    values[((static_cast<size_t>(b) * kv_heads + h) * capacity + at) * d + j] = row[(heads + kv_heads) * d + i];
  }
}

// Scratch of decode_attention, per (row, query head, chunk): the chunk's
// score maximum and sum of exponentials, then its unnormalised output.
struct attention_scratch {
  float* max_sum;  // [batch * heads * chunks][2]
  float* out;      // [batch * heads * chunks][d]
};

// The value phase of attention_chunk_kernel where a value row splits into
// 16-byte pieces that divide the block: thread (piece, subset) reads piece
// `piece` of the keys subset, subset + subsets, ... (one 16-byte load each)
// for kQueryPass queries at a time, and the subsets' sums are added in shared
// memory. Each thread issues n / subsets loads per pass, where one thread a
// (query, dimension) would issue n dependent scalar ones.
constexpr int kQueryPass = 4;

template <typename T>
__host__ __device__ constexpr bool vector_values(int d) {
  return d % (16 / static_cast<int>(sizeof(T))) == 0 && kKeysPerChunk % (d / (16 / static_cast<int>(sizeof(T)))) == 0;
}

// Floats of shared memory weigh_values_vectored adds after the probabilities.
template <typename T>
constexpr int vectored_partials(int d) {
  return kKeysPerChunk / (d / (16 / static_cast<int>(sizeof(T)))) * kQueryPass * d;
}

// out [group][chunks][d] (the scratch rows of the block's queries, chunk
// stride d * chunks) = probs [group][kKeysPerChunk] x v0 [n][d].
template <typename T>
__device__ void weigh_values_vectored(const T* v0, const float* probs, float* partial, float* out, int n, int group,
                                      int d, int chunks) {
  constexpr int kVector = 16 / sizeof(T);
  const int pieces = d / kVector, subsets = kKeysPerChunk / pieces;
  const int piece = threadIdx.x % pieces, subset = threadIdx.x / pieces;
  for (int g0 = 0; g0 < group; g0 += kQueryPass) {
    float acc[kQueryPass][kVector];
#pragma unroll
    for (int gg = 0; gg < kQueryPass; ++gg)
#pragma unroll
      for (int jj = 0; jj < kVector; ++jj) acc[gg][jj] = 0.f;
    for (int t = subset; t < n; t += subsets) {
      const uint4 raw = *reinterpret_cast<const uint4*>(v0 + static_cast<size_t>(t) * d + piece * kVector);
      const T* v = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int gg = 0; gg < kQueryPass; ++gg) {
        // A masked key's probability is 0 and its value may be anything (never read into the sum).
        const float p = g0 + gg < group ? probs[(g0 + gg) * kKeysPerChunk + t] : 0.f;
#pragma unroll
        for (int jj = 0; jj < kVector; ++jj) acc[gg][jj] += p != 0.f ? p * to_float(v[jj]) : 0.f;
      }
    }
#pragma unroll
    for (int gg = 0; gg < kQueryPass; ++gg)
#pragma unroll
      for (int jj = 0; jj < kVector; ++jj) partial[(subset * kQueryPass + gg) * d + piece * kVector + jj] = acc[gg][jj];
    __syncthreads();
    for (int i = threadIdx.x; i < kQueryPass * d; i += blockDim.x) {
      const int gg = i / d, j = i % d;
      if (g0 + gg >= group) continue;
      float sum = 0.f;
      for (int s2 = 0; s2 < subsets; ++s2) sum += partial[(s2 * kQueryPass + gg) * d + j];
      out[static_cast<size_t>(g0 + gg) * chunks * d + j] = sum;
    }
    __syncthreads();
  }
}

// One block per (chunk of kKeysPerChunk keys, key/value head, row); thread t
// scores key chunk * kKeysPerChunk + t against the group's queries.
template <typename T>
__global__ void attention_chunk_kernel(const T* q, const T* keys, const T* values, const bool* key_mask,
                                       const std::int64_t* slot, attention_scratch scratch, int heads, int kv_heads,
                                       int d, int capacity, float scale) {
  extern __shared__ float shared[];  // queries [group][d], then probabilities [group][kKeysPerChunk]
  const int chunk = blockIdx.x, kv = blockIdx.y, b = blockIdx.z, chunks = gridDim.x;
  const int group = heads / kv_heads, first = chunk * kKeysPerChunk;
  const std::int64_t last = *slot;
  const size_t head0 = static_cast<size_t>(b) * heads + static_cast<size_t>(kv) * group;
  if (first > last) return;  // past the step's slot: attention_combine_kernel leaves it out
  float* queries = shared;
  float* probs = shared + group * d;
  for (int i = threadIdx.x; i < group * d; i += blockDim.x) queries[i] = to_float(q[head0 * d + i]);
  __syncthreads();

  const int key = first + static_cast<int>(threadIdx.x);
  const bool valid = key < capacity && key <= last && key_mask[static_cast<size_t>(b) * capacity + key];
  float score[kMaxGroup];
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g) score[g] = 0.f;
  if (valid) {
    // The key's row in 16-byte loads (every row starts on 16 bytes when
    // d * sizeof(T) is a multiple of 16, as for head_dim 64 or 128).
    constexpr int kVector = 16 / sizeof(T);
    const T* k = keys + ((static_cast<size_t>(b) * kv_heads + kv) * capacity + key) * d;
    const int vectored = d % kVector == 0 ? d : 0;
    for (int j0 = 0; j0 < vectored; j0 += kVector) {
      const uint4 raw = *reinterpret_cast<const uint4*>(k + j0);
      const T* part = reinterpret_cast<const T*>(&raw);
#pragma unroll
      for (int jj = 0; jj < kVector; ++jj) {
        const float kj = to_float(part[jj]);
#pragma unroll
        for (int g = 0; g < kMaxGroup; ++g)
          if (g < group) score[g] += queries[g * d + j0 + jj] * kj;
      }
    }
    for (int j = vectored; j < d; ++j) {
      const float kj = to_float(k[j]);
#pragma unroll
      for (int g = 0; g < kMaxGroup; ++g)
        if (g < group) score[g] += queries[g * d + j] * kj;
    }
  }
#pragma unroll
  for (int g = 0; g < kMaxGroup; ++g)
    if (g < group) probs[g * kKeysPerChunk + threadIdx.x] = valid ? score[g] * scale : -INFINITY;
  __syncthreads();

  // Each warp takes whole queries: the chunk's maximum, exp(score - max), their sum.
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  for (int g = warp; g < group; g += warps) {
    float* p = probs + g * kKeysPerChunk;
    float m = -INFINITY;
    for (int i = lane; i < kKeysPerChunk; i += kWarp) m = fmaxf(m, p[i]);
    m = warp_max(m);
    float sum = 0.f;
    for (int i = lane; i < kKeysPerChunk; i += kWarp) {
      const float e = p[i] == -INFINITY ? 0.f : expf(p[i] - m);
      p[i] = e;
      sum += e;
    }
    sum = warp_sum(sum);
    if (lane == 0) {
      const size_t at = (head0 + g) * chunks + chunk;
      scratch.max_sum[2 * at] = m;
      scratch.max_sum[2 * at + 1] = sum;
    }
  }
  __syncthreads();

  // The chunk's values weighted by the probabilities, per (query, dimension).
  const std::int64_t end = last + 1 < capacity ? last + 1 : capacity;  // keys past it: not attended
  const int n = end - first < kKeysPerChunk ? static_cast<int>(end - first) : kKeysPerChunk;
  const T* v0 = values + ((static_cast<size_t>(b) * kv_heads + kv) * capacity + first) * d;
  if (vector_values<T>(d)) {
    weigh_values_vectored<T>(v0, probs, probs + group * kKeysPerChunk, scratch.out + (head0 * chunks + chunk) * d,
                             n, group, d, chunks);
    return;
  }
  for (int i = threadIdx.x; i < group * d; i += blockDim.x) {
    const int g = i / d, j = i % d;
    const float* p = probs + g * kKeysPerChunk;
    float acc = 0.f;
    for (int t = 0; t < n; ++t)
      if (p[t] != 0.f) acc += p[t] * to_float(v0[static_cast<size_t>(t) * d + j]);
    scratch.out[((head0 + g) * chunks + chunk) * d + j] = acc;
  }
}

// One block per (row, query head): the chunks up to the step's slot combined.
template <typename T>
__global__ void attention_combine_kernel(attention_scratch scratch, const std::int64_t* slot, T* out, int d,
                                         int chunks) {
  const size_t head = blockIdx.x;
  const std::int64_t reached = *slot / kKeysPerChunk + 1;  // chunks holding a key <= slot
  const int used = reached < chunks ? static_cast<int>(reached) : chunks;
  const float* ms = scratch.max_sum + head * chunks * 2;
  float m = -INFINITY;
  for (int c = 0; c < used; ++c) m = fmaxf(m, ms[2 * c]);
  float sum = 0.f;
  for (int c = 0; c < used; ++c)
    if (ms[2 * c] != -INFINITY) sum += ms[2 * c + 1] * expf(ms[2 * c] - m);
  for (int j = threadIdx.x; j < d; j += blockDim.x) {
    float acc = 0.f;
    for (int c = 0; c < used; ++c)
      if (ms[2 * c] != -INFINITY) acc += scratch.out[(head * chunks + c) * d + j] * expf(ms[2 * c] - m);
    out[head * d + j] = from_float<T>(sum > 0.f ? acc / sum : 0.f);
  }
}

template <typename T>
__global__ void silu_mul_kernel(const T* gate_up, T* out, int inter, size_t total) {
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    const size_t r = i / inter, j = i % inter;
    const float g = to_float(gate_up[r * 2 * inter + j]), u = to_float(gate_up[r * 2 * inter + inter + j]);
    out[i] = from_float<T>(round_to<T>(g / (1.f + expf(-g))) * u);
  }
}

constexpr int kChooseThreads = 1024;

// (value, index) of the larger value, the smaller index on a tie.
__device__ __forceinline__ void keep_larger(float& value, int& index, float other_value, int other_index) {
  if (other_value > value || (other_value == value && other_index < index)) {
    value = other_value;
    index = other_index;
  }
}

// (value, index) of the warp's largest value, the first index on a tie, in every lane.
__device__ __forceinline__ void warp_argmax(float& value, int& index) {
  for (int o = kWarp / 2; o > 0; o >>= 1)
    keep_larger(value, index, __shfl_xor_sync(0xffffffffu, value, o), __shfl_xor_sync(0xffffffffu, index, o));
}

// The same over the block (blockDim.x a multiple of 32), in every thread;
// `none` is the index of no value. Called once a kernel (its shared memory).
__device__ void block_argmax(float& value, int& index, int none) {
  __shared__ float warp_value[kWarp];
  __shared__ int warp_index[kWarp];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  warp_argmax(value, index);
  if (lane == 0) {
    warp_value[warp] = value;
    warp_index[warp] = index;
  }
  __syncthreads();
  value = lane < warps ? warp_value[lane] : -INFINITY;
  index = lane < warps ? warp_index[lane] : none;
  warp_argmax(value, index);
}

// Greedy choice in two kernels, so that a row's vocabulary is read by
// kChooseParts blocks instead of one (one block took 62 us a step at
// Qwen2.5's 151,936 tokens on an H100). First, each block's slice: its
// largest scaled logit, that logit's first index, and the sum of
// exp(logit - that largest).
constexpr int kChooseParts = 64;
constexpr int kPartThreads = 256;

struct choose_parts {
  float* best;  // [batch][kChooseParts]
  float* sum;   // [batch][kChooseParts]
  int* index;   // [batch][kChooseParts]
};

__global__ void choose_part_kernel(const float* logits, float temperature, choose_parts parts, int vocab) {
  const int part = blockIdx.x, b = blockIdx.y, length = (vocab + kChooseParts - 1) / kChooseParts;
  const int first = part * length, end = min(vocab, first + length);
  const float* row = logits + static_cast<size_t>(b) * vocab;
  auto scaled = [&](int i) { return temperature == 1.f ? row[i] : row[i] / temperature; };
  float best = -INFINITY;
  int at = vocab;
  for (int i = first + threadIdx.x; i < end; i += blockDim.x) keep_larger(best, at, scaled(i), i);
  block_argmax(best, at, vocab);
  float sum = 0.f;
  if (best != -INFINITY)
    for (int i = first + threadIdx.x; i < end; i += blockDim.x) sum += expf(scaled(i) - best);
  sum = block_sum(sum);
  if (threadIdx.x == 0) {
    const size_t slot = static_cast<size_t>(b) * kChooseParts + part;
    parts.best[slot] = best;
    parts.sum[slot] = sum;
    parts.index[slot] = at;
  }
}

// Then one warp a row: the largest of the slices' (the first index on a
// tie: slices are in index order), the sum of exponentials rescaled to it,
// the token and its log-prob.
__global__ void choose_combine_kernel(choose_parts parts, std::int64_t* tokens, float* logprobs, int vocab) {
  const int b = blockIdx.x, lane = threadIdx.x;
  const size_t row = static_cast<size_t>(b) * kChooseParts;
  float best = -INFINITY;
  int at = vocab;
  for (int p = lane; p < kChooseParts; p += kWarp) keep_larger(best, at, parts.best[row + p], parts.index[row + p]);
  warp_argmax(best, at);
  float sum = 0.f;
  for (int p = lane; p < kChooseParts; p += kWarp)
    if (parts.best[row + p] != -INFINITY) sum += parts.sum[row + p] * expf(parts.best[row + p] - best);
  sum = warp_sum(sum);
  if (lane == 0) {
    tokens[b] = min(at, vocab - 1);
    logprobs[b] = -logf(sum);
  }
}

// A sampled choice, one block of kChooseThreads per row: the maximum, the
// sum of exponentials, then the probabilities' prefix sums over contiguous
// chunks (one a thread) and the chunk where uniform[row] * the total falls.
__global__ void choose_kernel(const float* logits, const float* uniform, float temperature, std::int64_t* tokens,
                              float* logprobs, int vocab) {
  __shared__ float warp_value[kWarp];
  __shared__ int warp_index[kWarp];
  const int b = blockIdx.x, lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  const float* row = logits + static_cast<size_t>(b) * vocab;
  auto scaled = [&](int i) { return temperature == 1.f ? row[i] : row[i] / temperature; };

  float best = -INFINITY;
  int at = vocab;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) keep_larger(best, at, scaled(i), i);
  block_argmax(best, at, vocab);

  float sum = 0.f;
  for (int i = threadIdx.x; i < vocab; i += blockDim.x) sum += expf(scaled(i) - best);
  sum = block_sum(sum);
  const float log_sum = logf(sum);

  // Thread t's chunk [t * chunk, (t + 1) * chunk), its probabilities' sum, then an exclusive scan.
  const int chunk = (vocab + blockDim.x - 1) / blockDim.x;
  const int first = threadIdx.x * chunk, end = min(vocab, first + chunk);
  float mass = 0.f;
  for (int i = first; i < end; ++i) mass += expf(scaled(i) - best) / sum;
  float inclusive = mass;
  for (int o = 1; o < kWarp; o <<= 1) {
    const float up = __shfl_up_sync(0xffffffffu, inclusive, o);
    if (lane >= o) inclusive += up;
  }
  __syncthreads();
  if (lane == kWarp - 1) warp_value[warp] = inclusive;
  __syncthreads();
  float before_warp = 0.f, total = 0.f;
  for (int w = 0; w < warps; ++w) {
    if (w < warp) before_warp += warp_value[w];
    total += warp_value[w];
  }
  const float target = uniform[b] * total;
  float cumulative = before_warp + inclusive - mass;  // this chunk's exclusive prefix
  int found = vocab;
  if (cumulative < target || first == 0) {  // the first chunk also for a target of 0
    for (int i = first; i < end; ++i) {
      cumulative += expf(scaled(i) - best) / sum;
      if (cumulative >= target) {
        found = i;
        break;
      }
    }
  }
  // The smallest index found (no thread finds one when rounding leaves the
  // target above every prefix: the last token, as LibTorch's count clamps).
  for (int o = kWarp / 2; o > 0; o >>= 1) found = min(found, __shfl_xor_sync(0xffffffffu, found, o));
  __syncthreads();
  if (lane == 0) warp_index[warp] = found;
  __syncthreads();
  if (threadIdx.x == 0) {
    int token = vocab;
    for (int w = 0; w < warps; ++w) token = min(token, warp_index[w]);
    token = min(token, vocab - 1);
    tokens[b] = token;
    logprobs[b] = scaled(token) - best - log_sum;
  }
}

// Threads for a row of n elements: a multiple of 32, at most 1024.
int row_threads(int n) { return std::min(1024, std::max(kWarp, (n / 4 + kWarp - 1) / kWarp * kWarp)); }

int chunks_of(int capacity) { return (capacity + kKeysPerChunk - 1) / kKeysPerChunk; }

}  // namespace

const char* add_rms_norm(element type, void* x, const void* delta, const void* weight, void* out, int rows, int n,
                         float eps, void* stream) {
  return dispatch(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    add_rms_norm_kernel<T><<<rows, row_threads(n), 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<T*>(x), static_cast<const T*>(delta), static_cast<const T*>(weight), static_cast<T*>(out), n, eps);
    return launched();
  });
}

const char* rope_cache(element type, const void* qkv, const std::int64_t* positions, const std::int64_t* slot,
                       const float* inv_freq, void* q_out, void* keys, void* values, int batch, int heads,
                       int kv_heads, int head_dim, int capacity, void* stream) {
  return dispatch(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    rope_cache_kernel<T><<<batch, row_threads((heads + kv_heads) * head_dim * 2), 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const T*>(qkv), positions, slot, inv_freq, static_cast<T*>(q_out), static_cast<T*>(keys),
        static_cast<T*>(values), heads, kv_heads, head_dim, capacity);
    return launched();
  });
}

std::size_t decode_attention_scratch(int batch, int heads, int head_dim, int capacity) {
  return static_cast<std::size_t>(batch) * heads * chunks_of(capacity) * (2 + head_dim);
}

const char* decode_attention(element type, const void* q, const void* keys, const void* values, const bool* key_mask,
                             const std::int64_t* slot, void* out, float* scratch, int batch, int heads, int kv_heads,
                             int head_dim, int capacity, float scale, void* stream) {
  const int group = heads / kv_heads, chunks = chunks_of(capacity);
  if (heads % kv_heads != 0 || group > kMaxGroup || head_dim > kMaxHeadDim)
    return "decode_kernels: decode_attention takes at most 16 query heads a key/value head and head_dim 256";
  const std::size_t entries = static_cast<std::size_t>(batch) * heads * chunks;
  const attention_scratch parts{scratch, scratch + 2 * entries};
  auto* s = static_cast<cudaStream_t>(stream);
  return dispatch(type, [&](auto* tag) -> const char* {
    using T = std::remove_pointer_t<decltype(tag)>;
    const std::size_t shared =
        (static_cast<std::size_t>(group) * (head_dim + kKeysPerChunk) +
         (vector_values<T>(head_dim) ? vectored_partials<T>(head_dim) : 0)) * sizeof(float);
    attention_chunk_kernel<T><<<dim3(chunks, kv_heads, batch), kKeysPerChunk, shared, s>>>(
        static_cast<const T*>(q), static_cast<const T*>(keys), static_cast<const T*>(values), key_mask, slot, parts,
        heads, kv_heads, head_dim, capacity, scale);
    if (const char* e = launched()) return e;
    attention_combine_kernel<T><<<batch * heads, std::min(head_dim, 256), 0, s>>>(parts, slot, static_cast<T*>(out),
                                                                                  head_dim, chunks);
    return launched();
  });
}

const char* silu_mul(element type, const void* gate_up, void* out, int rows, int inter, void* stream) {
  const size_t total = static_cast<size_t>(rows) * inter;
  const int threads = 256, blocks = static_cast<int>(std::min<size_t>((total + threads - 1) / threads, 4096));
  return dispatch(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    silu_mul_kernel<T><<<blocks, threads, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<const T*>(gate_up),
                                                                                  static_cast<T*>(out), inter, total);
    return launched();
  });
}

std::size_t choose_tokens_scratch(int batch) { return static_cast<std::size_t>(batch) * kChooseParts * 3; }

const char* choose_tokens(const float* logits, const float* uniform, float temperature, std::int64_t* tokens,
                          float* logprobs, float* scratch, int batch, int vocab, void* stream) {
  auto* s = static_cast<cudaStream_t>(stream);
  if (uniform) {
    choose_kernel<<<batch, kChooseThreads, 0, s>>>(logits, uniform, temperature, tokens, logprobs, vocab);
    return launched();
  }
  const std::size_t entries = static_cast<std::size_t>(batch) * kChooseParts;
  const choose_parts parts{scratch, scratch + entries, reinterpret_cast<int*>(scratch + 2 * entries)};
  choose_part_kernel<<<dim3(kChooseParts, batch), kPartThreads, 0, s>>>(logits, temperature, parts, vocab);
  if (const char* e = launched()) return e;
  choose_combine_kernel<<<batch, kWarp, 0, s>>>(parts, tokens, logprobs, vocab);
  return launched();
}

}  // namespace crucible::policy::decode_kernels
