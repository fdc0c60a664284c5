// Device helpers shared by the fused decode kernels' .cu files
// (decode_kernels.cu, decode_product.cu): conversions between the element
// types and fp32, warp and block reductions, and the launchers' error and
// element-type dispatch. CUDA only; included by .cu files alone.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "actors/policy/decode_kernels.hpp"

namespace crucible::policy::decode_kernels {
namespace {

constexpr int kWarp = 32;

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

template <typename T>
__device__ __forceinline__ T from_float(float v);
template <>
__device__ __forceinline__ float from_float<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}

// v rounded to T and back: what a LibTorch op whose result is T leaves.
template <typename T>
__device__ __forceinline__ float round_to(float v) {
  return to_float(from_float<T>(v));
}

__device__ __forceinline__ float warp_sum(float v) {
  for (int o = kWarp / 2; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float warp_max(float v) {
  for (int o = kWarp / 2; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

// The sum over the block (blockDim.x a multiple of 32), in every thread.
__device__ float block_sum(float v) {
  __shared__ float partial[kWarp];
  const int lane = threadIdx.x % kWarp, warp = threadIdx.x / kWarp, warps = blockDim.x / kWarp;
  v = warp_sum(v);
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  return warp_sum(lane < warps ? partial[lane] : 0.f);
}

const char* launched() {
  const cudaError_t e = cudaGetLastError();
  return e == cudaSuccess ? nullptr : cudaGetErrorString(e);
}

// Calls f with a null pointer of the element type.
template <typename F>
const char* dispatch(element type, F f) {
  switch (type) {
    case element::f32: return f(static_cast<float*>(nullptr));
    case element::bf16: return f(static_cast<__nv_bfloat16*>(nullptr));
    case element::f16: return f(static_cast<__half*>(nullptr));
  }
  return "decode_kernels: unknown element type";
}

}  // namespace
}  // namespace crucible::policy::decode_kernels
