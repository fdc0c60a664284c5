#include "runtime/base/compute_tuning.hpp"

#include <dlfcn.h>
#include <sched.h>
#include <malloc.h>

#include <cstdlib>

namespace crucible {

void set_blas_threads(int threads) {
  if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) return;
  using set_threads = void (*)(int);
  if (auto f = reinterpret_cast<set_threads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) f(threads);
}

void tune_process_for_compute() {
  set_blas_threads(1);
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) mallopt(M_MMAP_THRESHOLD, 64 << 20);
  if (std::getenv("MALLOC_TRIM_THRESHOLD_") == nullptr) mallopt(M_TRIM_THRESHOLD, 1 << 30);
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
