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
  // One arena, the main one, for every thread: a thread's own 64 MiB heap
  // that empties is unmapped whatever M_TRIM_THRESHOLD says, and mapped again
  // at the next step, so the rollouts' and the learner's tensors came from
  // fresh pages each time (CPU quick-start: 4.05 million minor faults and
  // 136 s for 12 groups of stage 3, against 2.74 million and 106 s with one
  // arena; docs/benchmarks.md, "Starting a worker"). MALLOC_ARENA_MAX in the
  // environment overrides it.
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr && mallopt(M_ARENA_MAX, 1) != 1)
    std::fprintf(stderr, "crucible: mallopt(M_ARENA_MAX, 1) refused\n");
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
