// The measurement protocol: every number that decides how a candidate is
// checked and timed (design.md section 5). The evaluator takes one of these
// per evaluation; named protocols below pick defaults for a use. Plain data,
// copied freely.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "actors/evaluator/statistics.hpp"
#include "runtime/base/result.hpp"

namespace crucible::evaluator {

// Element tolerance: an output element passes when |c - r| <= atol + rtol * |r|.
struct tolerance {
  double atol = 1e-2;
  double rtol = 1e-2;
};

// The tolerances one measurement applies: by_dtype's entry for an output of
// that dtype (torch's names without "torch.": "float16", "bfloat16",
// "float32", ...), the fallback for any other.
struct tolerance_table {
  tolerance fallback;
  std::map<std::string, tolerance> by_dtype;
  std::string text() const;  // "atol=0.01 rtol=0.01, float16 atol=0.1 rtol=0.1"
};

struct protocol_options {
  // Name reported with each result ("default", "paper", "quick").
  std::string name = "default";

  // --- correctness (executability and agreement with the reference)
  // Fresh random inputs from get_inputs(), one seed each. Default 32: a budget
  // that serves training; the paper's 1000 is protocol "paper".
  std::uint32_t correctness_trials = 32;
  // Trials per worker request (the first request always holds one trial).
  std::uint32_t correctness_batch = 8;
  // Element passes when |c - r| <= atol + rtol * |r|. Default 1e-2 each
  // (KernelBench v0 and CUDA-L1), for every dtype.
  double atol = 1e-2;
  double rtol = 1e-2;
  // Strict mode: atol = rtol = strict_tolerance for every dtype but the
  // half-precision ones, which cannot hold it (float16 1e-3, bfloat16 1e-2,
  // about one unit in the last place of values near 1). Default off, 1e-5.
  bool strict = false;
  double strict_tolerance = 1e-5;
  // Per-dtype overrides on top of the above (`--tolerance DTYPE=ATOL[:RTOL]`,
  // [run] tolerances). Default none.
  std::map<std::string, tolerance> dtype_tolerance;
  // Executable means every candidate call finishes within this factor of the
  // reference's time. Default 1000.
  double executability_factor = 1000;
  // Floor of every worker deadline derived from reference time, seconds.
  // Default 3 (covers Python overhead around tiny calls).
  double min_deadline_s = 3;
  // Deadline for starting the worker and loading the task (Python and torch
  // import included). Default 120 s.
  double load_timeout_s = 120;
  // Deadline for loading and constructing the candidate (compiled
  // extensions are already built), and the time added to the deadline of
  // a request holding one of its first two calls (autotuning, JIT, graph
  // capture: evaluate.cpp's warmup_allowance). Default 60 s.
  double candidate_load_timeout_s = 60;
  // Deadline for compiling a load_inline candidate. Default 600 s.
  double compile_timeout_s = 600;
  // Reference calls timed alone after loading the task (the executability
  // baseline before the candidate ever runs). Default 3.
  std::uint32_t reference_probes = 3;

  // --- paired timing (layers 2 to 6)
  // Rounds run and discarded before measuring. Default 5.
  std::uint32_t warmup_rounds = 5;
  // CPU backend: time each call by the calling thread's CPU time instead of
  // the wall clock, so that other processes preempting the worker do not
  // count (torch runs single-threaded on the worker's core set). Work moved
  // to other threads or processes escapes this clock, so a candidate whose
  // wall/CPU ratio exceeds cpu_wall_ratio_limit times the reference's (it
  // waits on work done elsewhere) is a hack. CUDA always uses the
  // synchronized wall clock.
  // Defaults: true, 2.0.
  bool cpu_time_on_cpu = true;
  double cpu_wall_ratio_limit = 2.0;
  // CUDA backend: time each call by the device's work alone (the GPU sleeps
  // before the call while the host queues it; CUDA events around the call),
  // so that the host's dispatch speed, which moves between processes and
  // over time on a shared host, does not move the speedup of launch-bound
  // tasks. A fraction audit_fraction of rounds (at least one per request,
  // drawn from the seed, not measured) is timed without the sleep, by the
  // wall clock to a device-wide synchronize and by events, for the
  // stream_sync defence: work on another stream would otherwise run hidden
  // under the sleep. Off: the synchronized wall clock of every round.
  // Defaults: true, 0.1; protocol "paper" times the wall clock (false).
  bool device_clock = true;
  double audit_fraction = 0.1;
  // Consecutive buckets. Default 7 (the paper).
  std::uint32_t buckets = 7;
  // How a bucket's rounds become its mean. Default trimmed (the geometric
  // mean of the central 80% of rounds): on a shared CPU, preempted rounds
  // otherwise dominate the bucket; protocol "paper" uses arithmetic.
  bucket_statistic statistic = bucket_statistic::trimmed;
  // Balance the run order: rounds come in pairs of opposite orders (which
  // order goes first is drawn per pair from the seed), and each bucket's
  // number combines its candidate-first and reference-first rounds as
  // order_balanced_bucket_means does, so that the advantage of running
  // second (a few percent on CPU and GPU) cancels instead of showing as
  // identity at 1.01. Default true; protocol "paper" draws every round's
  // order independently and mixes the orders in one mean (false).
  bool balanced_order = true;
  // A variance of bucket means above this voids the measurement. Default 0.005.
  double void_variance = 0.005;
  // Apply void_variance (and the early stop's variance test) to the bucket
  // means divided by their median instead of to the raw means. The two agree
  // for speedups near 1; for a 20x speedup the paper's absolute bound asks
  // for a relative spread 20 times tighter, which CPU timers cannot give.
  // Default true; protocol "paper" uses the absolute bound (false).
  bool relative_variance = true;
  // Fresh measurements after a void before the result is void. Default 1.
  std::uint32_t void_retries = 1;
  // Early stop (crucible's addition): once at least min_rounds are in, stop
  // as soon as variance <= void_variance * stop_variance_margin and the
  // relative standard error of the median, 1.2533 * sd / sqrt(buckets) /
  // median, is <= stop_relative_stderr. Defaults: on, 140, 0.1, 0.003 (on
  // an H200 a stop at 0.005 left identity 2 standard errors off, at 1.011,
  // where more rounds cost under a second).
  bool early_stop = true;
  std::uint32_t min_rounds = 140;
  double stop_variance_margin = 0.1;
  double stop_relative_stderr = 0.003;
  // A speedup far from break-even (its three-standard-error interval wholly
  // above stop_far_factor, or wholly below its inverse) stops at the looser
  // stop_far_relative_stderr: what its reward settles, faster or slower by
  // that much, is then certain, and a 1% error does not move a 26x reward
  // across anything a group compares it with, while the tiny candidate
  // times of a large ratio rarely give 0.3% (on an H200 a 26x kernel ran the
  // whole 120 s window). Near 1.00 nothing changes: identity still needs
  // stop_relative_stderr. Defaults 2, 0.01 (one standard error is 1% of the
  // reward).
  double stop_far_factor = 2.0;
  double stop_far_relative_stderr = 0.01;
  // Hard limits of the measurement window. Defaults 1,000,000 rounds and
  // 120 s. The paper's window is 1800 s (protocol "paper"); on a shared CPU a
  // candidate whose bucket means never settle (an elementwise rewrite of a
  // matmul while the other core is busy) ran past 8 minutes without an early
  // stop, so the default caps one attempt at 2 minutes.
  std::uint64_t max_rounds = 1'000'000;
  double window_s = 120;
  // Wall time one timing request aims at (rounds per request follow from the
  // reference time, between 7 and 700). Default 0.25 s.
  double batch_target_s = 0.25;

  // --- defences (docs/defences.md)
  // Fraction of timed rounds whose candidate output is checked against the
  // reference after timing (defence spot_check), at least one round per
  // timing request. Default 0.1.
  double spot_check_fraction = 0.1;
  // A spot check that fails by at most this factor of the tolerance, with
  // finite outputs of the right structure, settles `incorrect` (tolerance,
  // spot_check named), not `hack`: an honest kernel whose numerics exceed
  // the bound on an unlucky timed round's inputs gives such an error (CUDA-L1's
  // L3-49 on the H200: 1.05x, on outputs of about 1e9), while an output
  // that is stale, cached or skipped work is off by the output's own scale.
  // The reward is 0 either way. Default 10.
  double spot_check_marginal = 10;

  // --- seeds
  // Reference and candidate models are built after torch.manual_seed of a
  // value drawn from the evaluation's seed; inputs likewise per trial/round.

  // The relative standard error at which the early stop settles a speedup
  // measured with this relative standard error so far.
  double stop_target(double speedup, double rel_stderr) const;

  std::string text() const;  // one line for logs
  tolerance_table tolerances() const;  // what the worker is told to apply
};

// Applies one tolerance setting to p: "ATOL[:RTOL]" sets atol and rtol (RTOL
// defaults to ATOL), "DTYPE=ATOL[:RTOL]" sets dtype_tolerance[DTYPE]. Errors:
// invalid_argument naming the setting and what is wrong with it.
status apply_tolerance(protocol_options& p, std::string_view setting);

// "default", "paper" (1000 trials, the full 1800 s window, no early stop),
// "quick" (8 trials, 70 rounds minimum, early stop at a relative standard
// error of 0.005, 20 s window; for tests and smoke runs). Errors: invalid_argument for any other name.
result<protocol_options> protocol_by_name(std::string_view name);

// The names protocol_by_name accepts.
std::vector<std::string> protocol_names();

}  // namespace crucible::evaluator
