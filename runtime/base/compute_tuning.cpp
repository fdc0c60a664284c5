#include "runtime/base/compute_tuning.hpp"

#include <dlfcn.h>
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

}  // namespace crucible
