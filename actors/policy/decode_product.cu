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

// Eight or four elements of row r of the product's input at vector v: x's
// own, or with Gated, SwiGLU's silu(gate) * up from x = gate_up [rows, 2k]
// rounded as silu_mul_kernel rounds them.
template <typename T, bool Gated>
__device__ __forceinline__ uint4 input_vector(const T* __restrict__ x, int r, int v, int k) {
  if constexpr (!Gated) {
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

// y[r, col] = sum_k x[r, k] * w[col, k] (+ bias[col]) for r < rows <= R,
// accumulated in fp32, rounded to T (and stored as O: T, or fp32 for the
// logits, which LibTorch rounds to T before widening).
template <typename T, typename O, int R, bool Gated>
__global__ void small_product_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                     O* __restrict__ y, int rows, int k, int n) {
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
        const uint4 xraw = input_vector<T, Gated>(x, r, v, k);
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

template <typename T, typename O, bool Gated>
const char* launch_small_product(const T* x, const T* w, const T* bias, O* y, int rows, int k, int n,
                                 cudaStream_t stream) {
  const dim3 grid((n + kProductWarps - 1) / kProductWarps), block(kProductWarps * kWarp);
  if (rows == 1) small_product_kernel<T, O, 1, Gated><<<grid, block, 0, stream>>>(x, w, bias, y, rows, k, n);
  else if (rows == 2) small_product_kernel<T, O, 2, Gated><<<grid, block, 0, stream>>>(x, w, bias, y, rows, k, n);
  else if (rows <= 4) small_product_kernel<T, O, 4, Gated><<<grid, block, 0, stream>>>(x, w, bias, y, rows, k, n);
  else small_product_kernel<T, O, kMaxProductRows, Gated><<<grid, block, 0, stream>>>(x, w, bias, y, rows, k, n);
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
    return fp32_out ? launch_small_product<T, float, false>(xt, wt, bt, static_cast<float*>(y), rows, k, n, s)
                    : launch_small_product<T, T, false>(xt, wt, bt, static_cast<T*>(y), rows, k, n, s);
  });
}

const char* gated_small_product(element type, const void* gate_up, const void* w, const void* bias, void* y, int rows,
                                int k, int n, void* stream) {
  if (!small_product_fits(type, rows, k, gate_up, w))
    return "decode_kernels: gated_small_product takes 1 to 8 rows, 16-byte aligned, of a multiple of 16 bytes";
  auto* s = static_cast<cudaStream_t>(stream);
  return dispatch(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    return launch_small_product<T, T, true>(static_cast<const T*>(gate_up), static_cast<const T*>(w),
                                            static_cast<const T*>(bias), static_cast<T*>(y), rows, k, n, s);
  });
}

}  // namespace crucible::policy::decode_kernels
