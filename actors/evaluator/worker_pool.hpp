// Warm workers (issue 18): each evaluator keeps one spare sandbox worker
// started ahead of its candidate, so that an evaluation does not wait for a
// fresh Python to import PyTorch, initialise the GPU and calibrate its sleep
// (8 to 13 s of every H200 evaluation). A worker still serves exactly one
// attempt and is then discarded: take() hands the oldest spare over and at
// once starts another, which gets ready while the current attempt runs.
// Where a worker takes longer to start than an evaluation takes (a GPU
// worker's start against a 2-3 s evaluation), several spares are kept,
// started one evaluation apart, so that the next one is always ready.
// A spare imports on the cores the evaluator does not measure on (when
// there are any), at niceness 10, and is moved to the measuring cores (and
// niceness 0 where allowed) when it is taken, so that its start neither
// shares a core with a measurement nor starves the roles on the other
// cores (on a 2-core machine a rollout silent for 10 s is declared dead).
//
// A spare never runs beside a measurement: while a worker is timed
// (quiet_scope), every spare past its imports (the file .imported in its
// scratch directory: the rest of its start is CUDA's context, the sleep's
// calibration and warm-up calls on the GPU the measurement uses) is stopped
// (SIGSTOP to its process group) and continued after. On the H200 a warm
// pass whose spares started beside the timed rounds settled a folded GEMM
// at 1.25-1.31 against 1.38-1.40 cold, and took up to 4,183 rounds where
// the cold pass took 531 (docs/benchmarks.md). A spare still importing
// (CPU only, on other cores) goes on, and waits at the end of its imports
// while the scope lasts: the scope writes .hold in every spare's scratch
// directory before it looks for .imported, and the worker writes .imported
// before it looks for .hold (sandbox_worker.py, warm_up), so a spare that
// imports inside the scope is either stopped or waits. Without the wait,
// a spare that finished importing during a long measurement started on
// the GPU beside it (the H200's L2-14 rewrite again: 1.29 against 1.39 and
// 1.40, 6,023 rounds).
//
// Who calls it: evaluator::evaluate (evaluate.cpp), one pool per evaluator,
// from the evaluator's one thread. Not thread-safe.
#pragma once

#include <deque>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "actors/evaluator/scratch.hpp"
#include "actors/evaluator/worker_session.hpp"
#include "runtime/base/result.hpp"

namespace crucible::evaluator {

// How to start one measuring worker; two recipes that compare equal start
// interchangeable workers (the scratch directory is made per worker).
struct worker_recipe {
  worker_start how;                    // how.scratch is ignored: each worker gets its own
  std::filesystem::path scratch_root;  // where scratch directories are made
  bool keep_scratch = false;           // keep them (worker.log) for debugging
  bool same_as(const worker_recipe& o) const;
};

// A started worker and the scratch directory it runs in (removed with it).
struct started_worker {
  scratch_dir scratch;
  worker_session session;
  bool warm = false;  // it was a spare, started before this attempt
};

class worker_pool {
 public:
  // spares: how many spare workers to keep (on CPU and on a GPU); 0 starts
  // each worker when it is needed (the cold start, for --compare-cold).
  worker_pool(unsigned cpu_spares, unsigned gpu_spares) : cpu_spares_(cpu_spares), gpu_spares_(gpu_spares) {}

  // The oldest live spare when the spares were started from an equal
  // recipe, else a new worker; then spares up to the count. Errors: io
  // (scratch, process start).
  result<started_worker> take(const worker_recipe& recipe);

  // Starts spares up to the count at once (an evaluator that knows its
  // device before its first job: evaluator::prime), so that the first
  // evaluations do not wait for the ramp of take()'s two a time.
  void prime(const worker_recipe& recipe);

  // The spares' pids (nvidia-smi lists them on the evaluator's own GPU).
  std::vector<int> spare_pids() const;

  // While one lives, the spares past their imports are stopped and the
  // others wait at the end of theirs; all go on when it goes. evaluate.cpp
  // holds one around a worker's timed rounds.
  class quiet_scope {
   public:
    quiet_scope(std::vector<int> stopped, std::vector<std::filesystem::path> holds)
        : stopped_(std::move(stopped)), holds_(std::move(holds)) {}
    ~quiet_scope();
    quiet_scope(quiet_scope&& o) noexcept : stopped_(std::move(o.stopped_)), holds_(std::move(o.holds_)) {
      o.stopped_.clear();
      o.holds_.clear();
    }
    quiet_scope(const quiet_scope&) = delete;
    quiet_scope& operator=(const quiet_scope&) = delete;
    quiet_scope& operator=(quiet_scope&&) = delete;
    const std::vector<int>& stopped() const { return stopped_; }  // the pids stopped

   private:
    std::vector<int> stopped_;
    std::vector<std::filesystem::path> holds_;  // the .hold files written
  };
  quiet_scope quiet();

 private:
  void top_up(const worker_recipe& recipe, unsigned at_most);
  static result<started_worker> start(const worker_recipe& recipe, const std::vector<int>& cores);

  unsigned cpu_spares_, gpu_spares_;
  std::deque<started_worker> spares_;  // oldest first
  std::optional<worker_recipe> spare_recipe_;
};

}  // namespace crucible::evaluator
