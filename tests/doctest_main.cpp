// The one main() every doctest binary links: BLAS and malloc as the crucible binary
// runs it (runtime/base/compute_tuning.hpp), then doctest.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "runtime/base/compute_tuning.hpp"

int main(int argc, char** argv) {
  crucible::tune_process_for_compute();
  return doctest::Context(argc, argv).run();
}
