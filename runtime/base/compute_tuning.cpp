#include "runtime/base/compute_tuning.hpp"

#include <dlfcn.h>
#include <sched.h>
#include <malloc.h>

#include <cstdio>
#include <cstdlib>

namespace crucible {

void set_blas_threads(int threads) {
  if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) return;
  using set_threads = void (*)(int);
  if (auto f = reinterpret_cast<set_threads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) f(threads);
}

void tune_process_for_compute() {
  set_blas_threads(1);
  // mallopt returns 0 for a value it refuses: M_MMAP_THRESHOLD above 32 MiB
  // (HEAP_MAX_SIZE / 2) is one, and 64 MiB was set here, silently ignored,
  // for a year of SFT steps at 3 s instead of 0.65 s. No mmapped chunks at
  // all instead: a block of any size comes from the heap (the main arena's
  // when a thread's 64 MiB heap cannot hold it), and freed blocks stay there
  // up to 1 GiB at the top.
  if (std::getenv("MALLOC_MMAP_MAX_") == nullptr && std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr &&
      mallopt(M_MMAP_MAX, 0) != 1)
    std::fprintf(stderr, "crucible: mallopt(M_MMAP_MAX, 0) refused: large tensors will come from mmap\n");
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr && mallopt(M_TRIM_THRESHOLD, 1 << 30) != 1)
    std::fprintf(stderr, "crucible: mallopt(M_TRIM_THRESHOLD, 1 GiB) refused\n");
}

std::vector<int> allowed_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

}  // namespace crucible
