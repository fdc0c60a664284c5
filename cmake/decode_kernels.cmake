# The policy's fused decode kernels (actors/policy/decode_kernels.cu, issue
# 21) are CUDA: the language is enabled here, at the top (every binary that
# links the policy links them), where LibTorch has CUDA (a PyTorch wheel on
# a GPU node) and nvcc is found. Debian's LibTorch is CPU-only: there, and
# with CRUCIBLE_DECODE_KERNELS=OFF, the decode step keeps LibTorch's ops.
# Sets CRUCIBLE_HAVE_DECODE_KERNELS.
set(CRUCIBLE_DECODE_KERNELS AUTO CACHE STRING "Fused CUDA decode kernels in the policy: AUTO, ON or OFF")
set(CRUCIBLE_HAVE_DECODE_KERNELS OFF)
if(CRUCIBLE_WITH_TORCH AND NOT CRUCIBLE_DECODE_KERNELS STREQUAL "OFF" AND (TORCH_CUDA_LIBRARIES OR C10_CUDA_LIBRARY))
  # nvcc where LibTorch's CUDA toolkit is, or the usual place, when neither
  # the build nor CUDACXX names one and it is not on PATH (the GPU nodes).
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(CRUCIBLE_NVCC nvcc HINTS ${CUDAToolkit_BIN_DIR} /usr/local/cuda/bin)
    if(CRUCIBLE_NVCC)
      set(CMAKE_CUDA_COMPILER ${CRUCIBLE_NVCC})
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(CRUCIBLE_HAVE_DECODE_KERNELS ON)
  endif()
endif()
if(CRUCIBLE_DECODE_KERNELS STREQUAL "ON" AND NOT CRUCIBLE_HAVE_DECODE_KERNELS)
  message(FATAL_ERROR "CRUCIBLE_DECODE_KERNELS=ON but LibTorch has no CUDA or nvcc was not found")
endif()
if(CRUCIBLE_HAVE_DECODE_KERNELS)
  # A100 and H100/H200 unless the build names its own.
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 80 90)
  endif()
  # One CUDA runtime in a process: the shared one LibTorch loads too.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  if(CCACHE_PROGRAM)
    set(CMAKE_CUDA_COMPILER_LAUNCHER ${CCACHE_PROGRAM})
  endif()
  message(STATUS "policy: fused decode kernels on (CUDA architectures ${CMAKE_CUDA_ARCHITECTURES})")
endif()
