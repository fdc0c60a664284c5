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
// take() from evaluator::evaluate. Thread-safe.
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

}  // namespace crucible::evaluator
