// small_product (decode_kernels.hpp): the decode step's matrix products for
// a few rows. At batch 1 to 8 a product reads its weight once and does
// almost no arithmetic, so its time is the weight's bytes over the memory
// bandwidth; cuBLAS's kernels for such skinny shapes reach a small part of
// it (tools/gpu/decode_step_probe.py measures both). Here one warp computes
// one output column for every row: it streams the column's weight row
// (nn.Linear's [out, in] layout, contiguous) in 16-byte loads, several in
// flight, and reads the inputs' matching 16 bytes from L1.
#include <cstdint>
#include <type_traits>

#include "actors/policy/decode_device.cuh"

namespace crucible::policy::decode_kernels {
namespace {

constexpr int kProductWarps = 4;  // output columns per block, a warp each
constexpr int kInFlight = 4;      // 16-byte weight loads a lane issues before using them

// Where a product's input comes from: x itself; SwiGLU's silu(gate) * up
// of x = gate_up [rows, 2k] (rounded as silu_mul_kernel rounds it); or
// RMSNorm(x + delta) * weight (rounded as add_rms_norm_kernel rounds it),
// computed by each block into shared memory first.
enum class input_kind { plain, gated, normed };

// The normed input's parts: x [rows, k], delta [rows, k] or null, the
// norm's weight [k]; block 0 writes x + delta to x_out (not x: the other
// blocks still read x).
template <typename T>
struct norm_parts {
  const T* x;
  const T* delta;
  const T* weight;
  T* x_out;
  float eps;
};

// Eight or four elements of row r of the product's input at vector v.
template <typename T, input_kind In>
__device__ __forceinline__ uint4 input_vector(const T* __restrict__ x, int r, int v, int k) {
  if constexpr (In != input_kind::gated) {
    return __ldg(reinterpret_cast<const uint4*>(x + static_cast<size_t>(r) * k) + v);
  } else {
    constexpr int kVector = 16 / sizeof(T);
    const T* row = x + static_cast<size_t>(r) * 2 * k;
    const uint4 g = __ldg(reinterpret_cast<const uint4*>(row) + v), u = __ldg(reinterpret_cast<const uint4*>(row + k) + v);
    const T* gt = reinterpret_cast<const T*>(&g);
    const T* ut = reinterpret_cast<const T*>(&u);
    uint4 out;
    T* ot = reinterpret_cast<T*>(&out);
#pragma unroll
    for (int j = 0; j < kVector; ++j) {
      const float gv = to_float(gt[j]);
      ot[j] = from_float<T>(round_to<T>(gv / (1.f + expf(-gv))) * to_float(ut[j]));
    }
    return out;
  }
}

// The normed input of every row into xs [rows, k] (shared memory), by the
// whole block: add_rms_norm_kernel's arithmetic, its sum over this block's threads.
template <typename T>
__device__ void normed_rows(const norm_parts<T>& p, T* xs, int rows, int k) {
  __shared__ float inv[kMaxProductRows];
  for (int r = 0; r < rows; ++r) {
    const T* row = p.x + static_cast<size_t>(r) * k;
    const T* add = p.delta ? p.delta + static_cast<size_t>(r) * k : nullptr;
    float squares = 0.f;
    for (int i = threadIdx.x; i < k; i += blockDim.x) {
      float v = to_float(row[i]);
      if (add) v = round_to<T>(v + to_float(add[i]));
      const T t = from_float<T>(v);
      xs[r * k + i] = t;
      if (blockIdx.x == 0 && p.x_out) p.x_out[static_cast<size_t>(r) * k + i] = t;
      squares += v * v;
    }
    const float total = block_sum(squares);
    if (threadIdx.x == 0) inv[r] = rsqrtf(total / static_cast<float>(k) + p.eps);
    __syncthreads();  // block_sum's partials are reused by the next row
  }
  for (int r = 0; r < rows; ++r)
    for (int i = threadIdx.x; i < k; i += blockDim.x)
      xs[r * k + i] = from_float<T>(to_float(p.weight[i]) * round_to<T>(to_float(xs[r * k + i]) * inv[r]));
  __syncthreads();
}

// y[r, col] = sum_k x[r, k] * w[col, k] (+ bias[col]) for r < rows <= R,
// accumulated in fp32, rounded to T (and stored as O: T, or fp32 for the
// logits, which LibTorch rounds to T before widening); x as In says.
template <typename T, typename O, int R, input_kind In>
__global__ void small_product_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                     O* __restrict__ y, int rows, int k, int n, norm_parts<T> norm) {
  if constexpr (In == input_kind::normed) {
    extern __shared__ uint4 normed_shared[];
    T* xs = reinterpret_cast<T*>(normed_shared);
    normed_rows(norm, xs, rows, k);
    x = xs;
  }
  constexpr int kVector = 16 / sizeof(T);
  const int lane = threadIdx.x % kWarp;
  const int col = blockIdx.x * kProductWarps + threadIdx.x / kWarp;
  if (col >= n) return;
  const uint4* wv = reinterpret_cast<const uint4*>(w + static_cast<size_t>(col) * k);
  const int vectors = k / kVector;
  float acc[R];
#pragma unroll
  for (int r = 0; r < R; ++r) acc[r] = 0.f;
  for (int v0 = lane; v0 < vectors; v0 += kWarp * kInFlight) {
    uint4 wraw[kInFlight];
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int v = v0 + u * kWarp;
      wraw[u] = v < vectors ? __ldcs(wv + v) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kInFlight; ++u) {
      const int v = v0 + u * kWarp;
      if (v >= vectors) break;
      const T* wt = reinterpret_cast<const T*>(&wraw[u]);
#pragma unroll
      for (int r = 0; r < R; ++r) {
        if (r >= rows) break;
        const uint4 xraw = In == input_kind::normed
                               ? reinterpret_cast<const uint4*>(x + static_cast<size_t>(r) * k)[v]
                               : input_vector<T, In>(x, r, v, k);
        const T* xt = reinterpret_cast<const T*>(&xraw);
#pragma unroll
        for (int j = 0; j < kVector; ++j) acc[r] += to_float(wt[j]) * to_float(xt[j]);
      }
    }
  }
  const float b = bias ? to_float(bias[col]) : 0.f;
#pragma unroll
  for (int r = 0; r < R; ++r) {
    if (r >= rows) break;
    const float sum = warp_sum(acc[r]);
    if (lane == 0) y[static_cast<size_t>(r) * n + col] = from_float<O>(round_to<T>(sum + b));
  }
}

template <typename T, typename O, input_kind In>
const char* launch_small_product(const T* x, const T* w, const T* bias, O* y, int rows, int k, int n,
                                 cudaStream_t stream, norm_parts<T> norm = {}) {
  const dim3 grid((n + kProductWarps - 1) / kProductWarps), block(kProductWarps * kWarp);
  const int shared = In == input_kind::normed ? rows * k * static_cast<int>(sizeof(T)) : 0;
  auto launch = [&](auto kernel) { kernel<<<grid, block, shared, stream>>>(x, w, bias, y, rows, k, n, norm); };
  if (rows == 1) launch(small_product_kernel<T, O, 1, In>);
  else if (rows == 2) launch(small_product_kernel<T, O, 2, In>);
  else if (rows <= 4) launch(small_product_kernel<T, O, 4, In>);
  else launch(small_product_kernel<T, O, kMaxProductRows, In>);
  return launched();
}

}  // namespace

bool small_product_fits(element type, int rows, int k, const void* x, const void* w) {
  const int size = type == element::f32 ? 4 : 2;
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return rows >= 1 && rows <= kMaxProductRows && k > 0 && (k * size) % 16 == 0 && aligned(x) && aligned(w);
}

const char* small_product(element type, const void* x, const void* w, const void* bias, void* y, bool fp32_out,
                          int rows, int k, int n, void* stream) {
  if (!small_product_fits(type, rows, k, x, w))
    return "decode_kernels: small_product takes 1 to 8 rows, 16-byte aligned, of a multiple of 16 bytes";
  auto* s = static_cast<cudaStream_t>(stream);
  return dispatch(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const auto* xt = static_cast<const T*>(x);
    const auto* wt = static_cast<const T*>(w);
    const auto* bt = static_cast<const T*>(bias);
    return fp32_out ? launch_small_product<T, float, input_kind::plain>(xt, wt, bt, static_cast<float*>(y), rows, k, n, s)
                    : launch_small_product<T, T, input_kind::plain>(xt, wt, bt, static_cast<T*>(y), rows, k, n, s);
  });
}

const char* gated_small_product(element type, const void* gate_up, const void* w, const void* bias, void* y, int rows,
                                int k, int n, void* stream) {
  if (!small_product_fits(type, rows, k, gate_up, w))
    return "decode_kernels: gated_small_product takes 1 to 8 rows, 16-byte aligned, of a multiple of 16 bytes";
  auto* s = static_cast<cudaStream_t>(stream);
  return dispatch(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    return launch_small_product<T, T, input_kind::gated>(static_cast<const T*>(gate_up), static_cast<const T*>(w),
                                                         static_cast<const T*>(bias), static_cast<T*>(y), rows, k, n, s);
  });
}

bool normed_small_product_fits(element type, int rows, int k, const void* x, const void* w) {
  const int size = type == element::f32 ? 4 : 2;
  return small_product_fits(type, rows, k, x, w) && rows * k * size <= kMaxNormedBytes;
}

const char* normed_small_product(element type, const void* x, const void* delta, const void* norm_weight, void* x_out,
                                 float eps, const void* w, const void* bias, void* y, bool fp32_out, int rows, int k,
                                 int n, void* stream) {
  if (!normed_small_product_fits(type, rows, k, x, w))
    return "decode_kernels: normed_small_product takes 1 to 8 rows, 16-byte aligned, of a multiple of 16 bytes, "
           "at most 46 KiB in all";
  auto* s = static_cast<cudaStream_t>(stream);
  return dispatch(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const norm_parts<T> norm{static_cast<const T*>(x), static_cast<const T*>(delta), static_cast<const T*>(norm_weight),
                             static_cast<T*>(x_out), eps};
    const auto* wt = static_cast<const T*>(w);
    const auto* bt = static_cast<const T*>(bias);
    return fp32_out ? launch_small_product<T, float, input_kind::normed>(nullptr, wt, bt, static_cast<float*>(y), rows,
                                                                         k, n, s, norm)
                    : launch_small_product<T, T, input_kind::normed>(nullptr, wt, bt, static_cast<T*>(y), rows, k, n,
                                                                     s, norm);
  });
}

}  // namespace crucible::policy::decode_kernels
