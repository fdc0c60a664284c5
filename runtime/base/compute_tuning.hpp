// How a crucible process sets up the C libraries under LibTorch on the CPU.
// Called first thing by main() of crucible, crucible-policy and the tests.
//
// BLAS: Debian's libblas.so.3 is OpenBLAS when libopenblas0-pthread is
// installed (tools/setup.sh). By default it keeps a pool of one thread per
// core that spins on sched_yield between calls, and crucible calls BLAS from
// several actors at once (rollouts, the learner), each on its own thread: on
// a 2-core machine the spinning pool starved the callers (a quick-start run
// stalled at 95% CPU in sched_yield). So one BLAS thread per caller, unless
// OPENBLAS_NUM_THREADS says otherwise.
//
// malloc: LibTorch frees and reallocates the same large buffers every
// training step; above glibc's mmap threshold each one comes back as fresh
// pages from the kernel (page faults: on this kind of VM 80% of an SFT
// step: 3.08 s a step against 0.65 s with them in the heap). So no block
// comes from mmap (M_MMAP_MAX 0) and the heap keeps up to 1 GiB free at its
// top, unless MALLOC_MMAP_MAX_, MALLOC_MMAP_THRESHOLD_ or
// MALLOC_TRIM_THRESHOLD_ say otherwise.
#pragma once

#include <vector>

namespace crucible {

void tune_process_for_compute();

// OpenBLAS threads of the calling process from now on (stage 1 of
// `crucible run` uses every core before its actors start). No-op without
// OpenBLAS or when OPENBLAS_NUM_THREADS is set.
void set_blas_threads(int threads);

// The CPU cores this process may run on (its affinity set), ascending; empty
// when the kernel does not say. The evaluators pick their workers' cores
// from it.
std::vector<int> allowed_cores();

}  // namespace crucible
