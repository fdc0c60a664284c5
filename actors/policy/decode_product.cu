// small_product (decode_kernels.hpp): the decode step's matrix products at
// batch 1. A product of one row reads its weight once and does almost no
// arithmetic, so its time is the weight's bytes over the memory bandwidth
// plus the launch; cuBLAS's kernels for such skinny shapes spend more
// (tools/gpu/decode_step_probe.py measures both). Here one warp computes one
// output column: it streams the column's weight row (nn.Linear's [out, in]
// layout, contiguous) in 16-byte loads, several in flight, and reads the
// input's matching 16 bytes from L1.
#include <cstdint>
#include <type_traits>

#include "actors/policy/decode_device.cuh"

namespace crucible::policy::decode_kernels {
namespace {

constexpr int kProductWarps = 4;  // output columns per block, a warp each
constexpr int kInFlight = 4;      // 16-byte weight loads a lane issues before using them

// y[col] = sum_k x[k] * w[col, k] (+ bias[col]), accumulated in fp32,
// rounded to T (and stored as O: T, or fp32 for the logits, which LibTorch
// rounds to T before widening).
template <typename T, typename O>
__global__ void small_product_kernel(const T* __restrict__ x, const T* __restrict__ w, const T* __restrict__ bias,
                                     O* __restrict__ y, int k, int n) {
  constexpr int kVector = 16 / sizeof(T);
  const int lane = threadIdx.x % kWarp;
  const int col = blockIdx.x * kProductWarps + threadIdx.x / kWarp;
  if (col >= n) return;
  const uint4* wv = reinterpret_cast<const uint4*>(w + static_cast<size_t>(col) * k);
  const uint4* xv = reinterpret_cast<const uint4*>(x);
  const int vectors = k / kVector;
  float acc = 0.f;
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
      const uint4 xraw = __ldg(xv + v);
      const T* wt = reinterpret_cast<const T*>(&wraw[u]);
      const T* xt = reinterpret_cast<const T*>(&xraw);
#pragma unroll
      for (int j = 0; j < kVector; ++j) acc += to_float(wt[j]) * to_float(xt[j]);
    }
  }
  const float sum = warp_sum(acc);
  if (lane == 0) y[col] = from_float<O>(round_to<T>(sum + (bias ? to_float(bias[col]) : 0.f)));
}

}  // namespace

bool small_product_fits(element type, int rows, int k, const void* x, const void* w) {
  const int size = type == element::f32 ? 4 : 2;
  const auto aligned = [](const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; };
  return rows == 1 && k > 0 && (k * size) % 16 == 0 && aligned(x) && aligned(w);
}

const char* small_product(element type, const void* x, const void* w, const void* bias, void* y, bool fp32_out,
                          int rows, int k, int n, void* stream) {
  if (!small_product_fits(type, rows, k, x, w))
    return "decode_kernels: small_product takes one row of a multiple of 16 bytes, 16-byte aligned";
  auto* s = static_cast<cudaStream_t>(stream);
  const dim3 grid((n + kProductWarps - 1) / kProductWarps), block(kProductWarps * kWarp);
  return dispatch(type, [&](auto* tag) {
    using T = std::remove_pointer_t<decltype(tag)>;
    const auto* xt = static_cast<const T*>(x);
    const auto* wt = static_cast<const T*>(w);
    const auto* bt = static_cast<const T*>(bias);
    if (fp32_out) small_product_kernel<T, float><<<grid, block, 0, s>>>(xt, wt, bt, static_cast<float*>(y), k, n);
    else small_product_kernel<T, T><<<grid, block, 0, s>>>(xt, wt, bt, static_cast<T*>(y), k, n);
    return launched();
  });
}

}  // namespace crucible::policy::decode_kernels
