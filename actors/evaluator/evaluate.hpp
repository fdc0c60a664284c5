// The evaluator's one entry point: measure a candidate against its task the
// way design.md section 5 says (compile once, sandboxed worker, correctness
// on fresh inputs, paired rounds in randomized order, 7 buckets, variance
// void, median, conservative rounding), with the protocol passed in.
//
// Who calls it: the evaluator actor (evaluator_actor.hpp, on its own
// detached thread), `crucible eval`, the benchmark and tests. An evaluator
// object may be used from one thread at a time; several evaluator objects may
// share one compile_cache from different threads.
//
// What the candidate did is always an evaluation (status + reason), never an
// error. Errors are for when the evaluation could not run at all:
// invalid_argument (bad device string), io (scratch directory, cannot start
// Python), unavailable (the device is busy with another compute process).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "actors/evaluator/compile_cache.hpp"
#include "actors/evaluator/cpu_stage.hpp"
#include "actors/evaluator/protocol.hpp"
#include "actors/evaluator/sandbox.hpp"
#include "actors/evaluator/worker_pool.hpp"
#include "actors/evaluator/worker_session.hpp"
#include "runtime/base/result.hpp"

namespace crucible::evaluator {

// The statuses of messages/domain.fbs EvalStatus, in the same order.
enum class eval_status { ok, compile_error, runtime_error, timeout, incorrect, hack, void_result, crashed };

// "ok", "compile_error", ..., "void", "crashed".
std::string_view to_string(eval_status s);

struct eval_request {
  std::string task_source;             // KernelBench format: Model, get_inputs, get_init_inputs
  std::string candidate_source;        // defines ModelNew
  std::string task_id = "task";        // for reasons and module names
  std::string device = "cpu";          // "cpu" or "cuda:N"
  std::uint64_t seed = 0;              // every input seed and round order derive from it
  std::string text() const;
};

// Reads task and candidate files into a request. Errors: not_found, io.
result<eval_request> load_request(const std::filesystem::path& task, const std::filesystem::path& candidate,
                                  std::string device, std::uint64_t seed);

struct evaluation {
  eval_status status = eval_status::crashed;
  double reward = 0;                   // conservative_round(speedup_raw) when ok, else 0
  double speedup_raw = 0;              // median of bucket means
  std::vector<double> bucket_means;
  double bucket_variance = 0;          // sample variance of bucket_means
  double bucket_relative_variance = 0; // the same of bucket_means / speedup_raw
  std::uint64_t rounds = 0;            // timed rounds of the last attempt (warm-up excluded)
  std::uint32_t correctness_trials = 0;
  double ref_us = 0, cand_us = 0;      // medians of the rounds' times by `clock`
  std::string clock;                   // "thread_cpu" (CPU backend default) or "wall"
  double ref_wall_us = 0, cand_wall_us = 0;    // medians of the wall-clock times
  double ref_event_us = 0, cand_event_us = 0;  // CUDA event medians (0 on CPU)
  double max_abs_error = 0;            // over the correctness trials run
  std::string device;
  double duration_s = 0;
  // Seconds spent in each step (device_check: the busy-GPU query, compile,
  // load_task: worker start included,
  // load_candidate, correctness, timing: warm-up included, close), summed
  // over attempts: where an evaluation's duration goes.
  std::map<std::string, double> phase_s;
  std::string reason;
  std::vector<std::string> defences_fired;
  std::uint64_t seed = 0;
  std::string protocol;
  bool task_fault = false;             // the task, not the candidate, failed
  bool compiled = false;               // the candidate builds an inline extension
  bool compile_cache_hit = false;
  // Inline extensions the timing worker imported from the compile cache, and
  // those it had to build itself (calls the compile pool could not reach).
  std::uint32_t extensions_imported = 0, extensions_built = 0;
  bool warm_worker = false;            // the last attempt's worker was a warm spare (worker_pool.hpp)
  std::uint32_t attempts = 0;          // measurement attempts (1 + void retries used)
  std::vector<std::string> sandbox;    // isolation that held: userns, netns, mountns-readonly, ...
  std::vector<std::string> worker_info;  // torch=..., python=..., device_name=...
  // The measuring thread's host over the timing phase, summed over its
  // timing requests (each request's line from the worker, "timing_host"):
  // the cores it was seen on at each request's start and end, the time it
  // waited runnable for a CPU, and its involuntary context switches. What
  // to compare when a reward moves between passes of the same job.
  std::vector<int> timing_cores;
  double timing_runqueue_wait_s = 0;
  std::uint64_t timing_involuntary_switches = 0;

  std::string text() const;            // one line for logs
};

nlohmann::json to_json(const evaluation& e);

struct evaluator_options {
  // Python, worker script and generated code. Default: this build's.
  worker_environment worker = worker_environment::defaults();
  // Sandbox limits of the measuring worker. Default: sandbox_limits{} with
  // cores = default_cores() (CUDA: address space unlimited).
  sandbox_limits limits = default_limits();
  // Where scratch directories go. Default: $TMPDIR (or /tmp)/crucible-eval.
  std::filesystem::path scratch_root = default_scratch_root();
  // Keep scratch directories (worker.log) for debugging. Default false.
  bool keep_scratch = false;
  // The compile cache, when the evaluator makes its own. Default options.
  compile_cache_options compile;
  // Warm spare workers to keep (worker_pool.hpp), on CPU and on a GPU: a
  // GPU worker's start (8-13 s on an H200) outlasts a 2-3 s evaluation, so
  // one spare is not ready in time. Defaults 1 and 4; 0 and 0 is the cold
  // start (crucible-bench-eval --compare-cold).
  unsigned warm_spares = 1, warm_spares_gpu = 4;

  // The highest-numbered core this process may use: leaves core 0 to the OS
  // and the evaluator itself.
  static std::vector<int> default_cores();
  static sandbox_limits default_limits();
  static std::filesystem::path default_scratch_root();
};

class evaluator {
 public:
  // cache: shared with other evaluators; null makes a private one. cpu: its
  // CPU stage, when the caller prefetches through it from another thread
  // (the evaluator role); null makes one on this cache.
  explicit evaluator(evaluator_options options = {}, std::shared_ptr<compile_cache> cache = nullptr,
                     std::shared_ptr<cpu_stage> cpu = nullptr);

  result<evaluation> evaluate(const eval_request& request, const protocol_options& protocol);

  // Starts the CPU stage (syntax check, compile) of a job that will come
  // next, on other cores (cpu_stage.hpp). Thread-safe.
  void prefetch(const eval_request& request) { cpu_->ahead(request.candidate_source, request.task_source); }
  // Whether that CPU stage is done (or was never started ahead): evaluate()
  // would go straight to the device. Thread-safe.
  bool ready(const eval_request& request) const { return cpu_->ready(request.candidate_source, request.task_source); }

  // Starts every warm spare for this device now (worker_pool::prime), before
  // the first job: the role calls it when it starts. Errors: invalid_argument
  // (device). Call from the thread that calls evaluate().
  status prime(const std::string& device);

  compile_cache& cache() { return *cache_; }
  const evaluator_options& options() const { return options_; }

 private:
  evaluator_options options_;
  std::shared_ptr<compile_cache> cache_;
  worker_pool workers_;
  std::shared_ptr<cpu_stage> cpu_;
};

// One evaluation with default evaluator options.
result<evaluation> evaluate(const eval_request& request, const protocol_options& protocol);

}  // namespace crucible::evaluator
