#include "runtime/base/blas_threads.hpp"

#include <dlfcn.h>

#include <cstdlib>

namespace crucible {

void one_blas_thread_per_caller() {
  if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) return;
  using set_threads = void (*)(int);
  if (auto f = reinterpret_cast<set_threads>(dlsym(RTLD_DEFAULT, "openblas_set_num_threads"))) f(1);
}

}  // namespace crucible
