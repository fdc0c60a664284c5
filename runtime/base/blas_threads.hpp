// One BLAS thread per calling thread. Debian's libblas.so.3 is OpenBLAS
// when libopenblas0-pthread is installed (tools/setup.sh): by default it
// keeps a pool of one thread per core that spins on sched_yield between
// calls, and crucible calls BLAS from several actors at once (rollouts, the
// learner, tests), each on its own thread; on a 2-core machine the spinning
// pool starved the callers (a quick-start run stalled at 95% CPU in
// sched_yield). Called first thing by main() of crucible and crucible-policy.
// OPENBLAS_NUM_THREADS, when set, wins. Without OpenBLAS it does nothing.
#pragma once

namespace crucible {

void one_blas_thread_per_caller();

}  // namespace crucible
