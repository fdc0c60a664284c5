// Warm workers (issue 18): each evaluator keeps one spare sandbox worker
// started ahead of its candidate, so that an evaluation does not wait for a
// fresh Python to import PyTorch, initialise the GPU and calibrate its sleep
// (about 8 s of every H200 evaluation). A worker still serves exactly one
// attempt and is then discarded: take() hands the spare over and at once
// starts the next one, which gets ready while the current attempt runs.
// A spare imports on the cores the evaluator does not measure on (when
// there are any) and is moved to the measuring cores when it is taken, so
// that its start does not share a core with a measurement.
//
// Who calls it: evaluator::evaluate (evaluate.cpp), one pool per evaluator,
// from the evaluator's one thread. Not thread-safe.
#pragma once

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
  // warm: keep a spare; false starts each worker when it is needed (the
  // cold start, for --compare-cold and for callers that evaluate once).
  explicit worker_pool(bool warm) : warm_(warm) {}

  // The spare when it was started from an equal recipe, else a new worker;
  // then (warm) the next spare. Errors: io (scratch, process start).
  result<started_worker> take(const worker_recipe& recipe);

  // The spare's pid (nvidia-smi lists it on the evaluator's own GPU), or 0.
  int spare_pid() const { return spare_ ? spare_->session.process().pid() : 0; }

  // Kills the spare (a changed device or limits; the evaluator's end).
  void drop() { spare_.reset(); }

 private:
  static result<started_worker> start(const worker_recipe& recipe, const std::vector<int>& cores);

  bool warm_;
  std::optional<started_worker> spare_;
  std::optional<worker_recipe> spare_recipe_;
};

}  // namespace crucible::evaluator
