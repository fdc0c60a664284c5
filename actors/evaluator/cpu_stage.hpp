// The CPU part of an evaluation, ahead of the device's turn (issue 18: a GPU
// that never waits for a CPU step). The syntax check and the compile pool
// (stage 1 included) need no device; for a job still queued behind the one
// being measured they run on the node's other cores, so that when its turn
// comes the evaluator goes straight to the worker. evaluate() takes the
// result: finished, still running (it waits), or never asked for (it runs
// in line, as before).
//
// Who calls it: ahead() from the evaluator role's job handler (a job it holds
// beyond the one running) and from crucible-bench-eval (its next jobs);
// take() from evaluator::evaluate; ready() from the job queues that pick
// what to measure next. Thread-safe.
#pragma once

#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "actors/evaluator/compile_cache.hpp"
#include "runtime/base/result.hpp"

namespace crucible::evaluator {

// The CPU stage's findings for one candidate.
struct cpu_verdict {
  // syntax_error_of's answer: a SyntaxError's text, or nullopt.
  result<std::optional<std::string>> syntax = std::optional<std::string>{};
  // The compile cache's outcome; unset when the candidate does not parse.
  std::optional<result<compile_outcome>> compiled;
  double syntax_s = 0, compile_s = 0;  // seconds each step took
  bool ahead = false;                  // computed by ahead(), before take()
};

class cpu_stage {
 public:
  cpu_stage(std::shared_ptr<compile_cache> cache, worker_environment env, sandbox_limits limits,
            std::filesystem::path scratch_root);
  ~cpu_stage();  // waits for the checks still running
  cpu_stage(const cpu_stage&) = delete;
  cpu_stage& operator=(const cpu_stage&) = delete;

  // Starts the checks of this candidate on another thread (once per
  // candidate and task: a second call while it is held is a no-op).
  void ahead(const std::string& candidate_source, const std::string& task_source);

  // The findings: those ahead() computed (waiting for them if need be), else
  // computed now on the calling thread.
  cpu_verdict take(const std::string& candidate_source, const std::string& task_source);

  // Whether take() would return at once: its checks finished ahead, or were
  // never asked for ahead (take() then runs them in line, as a job that was
  // not prefetched). The evaluator's queue measures a ready job before one
  // still compiling (ready_first.hpp), so the device never waits for a
  // build while other work is ready.
  bool ready(const std::string& candidate_source, const std::string& task_source) const;

  // Candidates ahead() holds, running or finished, not yet taken.
  std::size_t held() const;

 private:
  cpu_verdict run(const std::string& candidate_source, const std::string& task_source) const;

  std::shared_ptr<compile_cache> cache_;
  worker_environment env_;
  sandbox_limits limits_;
  std::filesystem::path scratch_root_;
  mutable std::mutex mutex_;
  std::map<std::string, std::future<cpu_verdict>> held_;  // key: sha256(task, candidate); guarded
};

// Which of n queued jobs to measure next: the first whose CPU stage is ready
// (ready(i)), so that a job still compiling does not hold the device while
// jobs behind it could run; nullopt when every one is still compiling. Jobs
// keep their order otherwise, and a job is never passed over once its build
// is done. Used by the evaluator actor and crucible-bench-eval.
template <class Ready>
std::optional<std::size_t> first_ready(std::size_t n, Ready&& ready) {
  for (std::size_t i = 0; i < n; ++i)
    if (ready(i)) return i;
  return std::nullopt;
}

}  // namespace crucible::evaluator
