// Device memory in use, for the benchmarks that print it beside a peer's
// torch.cuda.mem_get_info (crucible-policy bench-generate, learner_bench).
#pragma once

#include <dlfcn.h>

#include <cstddef>

namespace crucible::policy {

// Device memory in use (total - free) as cudaMemGetInfo reports it, found at
// run time in the CUDA runtime LibTorch loaded; -1 without CUDA. With
// LibTorch's caching allocator this is about the peak reserved so far.
inline double device_memory_used_gib() {
  using get_info_fn = int (*)(std::size_t*, std::size_t*);
  auto fn = reinterpret_cast<get_info_fn>(dlsym(RTLD_DEFAULT, "cudaMemGetInfo"));
  std::size_t free = 0, total = 0;
  if (!fn || fn(&free, &total) != 0) return -1;
  return static_cast<double>(total - free) / (1024.0 * 1024.0 * 1024.0);
}

}  // namespace crucible::policy
