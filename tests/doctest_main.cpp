// The one main() every doctest binary links: BLAS as the crucible binary
// runs it (runtime/base/blas_threads.hpp), then doctest.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "runtime/base/blas_threads.hpp"

int main(int argc, char** argv) {
  crucible::one_blas_thread_per_caller();
  return doctest::Context(argc, argv).run();
}
