#include "actors/evaluator/evaluate.hpp"

#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/evaluator/device.hpp"
#include "actors/evaluator/scratch.hpp"
#include "actors/evaluator/statistics.hpp"
#include "actors/evaluator/syntax_check.hpp"
#include "runtime/base/compute_tuning.hpp"

namespace crucible::evaluator {
namespace {

using namespace std::chrono;

clock_type::time_point after(double seconds) {
  return clock_type::now() + duration_cast<clock_type::duration>(duration<double>(seconds));
}

void add_defence(evaluation& e, const std::string& d) {
  if (std::find(e.defences_fired.begin(), e.defences_fired.end(), d) == e.defences_fired.end())
    e.defences_fired.push_back(d);
}

// The defence behind a state change the worker reported ("num_threads 1->4").
std::string state_defence(const std::string& change) {
  if (change.rfind("num_threads", 0) == 0) return "thread_count";
  if (change.rfind("python_threads", 0) == 0 || change.rfind("native_threads", 0) == 0)
    return "background_threads";
  return "global_state";
}

std::string first_line(const std::string& s, std::size_t max = 600) {
  // The last non-empty line of a traceback says what happened; keep the tail.
  std::string t = s.size() > max ? "..." + s.substr(s.size() - max) : s;
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

// The variance that the protocol's bound applies to.
double judged_variance(const evaluation& e, const protocol_options& p) {
  return p.relative_variance ? e.bucket_relative_variance : e.bucket_variance;
}

// How this evaluator starts a measuring worker on dev: its options' limits
// and environment, and on a GPU the device and what the driver needs.
worker_recipe recipe_for(const evaluator_options& opt, const device_spec& dev, std::vector<std::string> build_env) {
  worker_recipe recipe;
  recipe.scratch_root = opt.scratch_root;
  recipe.keep_scratch = opt.keep_scratch;
  worker_start& how = recipe.how;
  how.env = opt.worker;
  how.extra_env = std::move(build_env);
  how.limits = opt.limits;
  how.threads = static_cast<std::uint32_t>(std::max<std::size_t>(1, how.limits.cores.size()));
  if (dev.cuda) {
    how.cuda_visible_devices = std::to_string(dev.index);
    how.limits.address_space_bytes = 0;
    // Inside an unprivileged user namespace the NVIDIA driver cannot
    // initialise (cudaGetDeviceCount: error 304 on the H200 machines), so a
    // GPU worker runs without the user, network and mount namespaces; its
    // other limits stay. actors/evaluator/README.md says what that leaves.
    how.limits.isolate_network = false;
    how.limits.read_only_filesystem = false;
  }
  return recipe;
}

// Calls of a candidate that the executability bound leaves to the deadline
// (attempt::correctness says why).
constexpr std::uint32_t warmup_calls = 2;

// One attempt: a fresh worker, load task and candidate, (correctness on the
// first attempt), paired rounds. Owns the worker for its lifetime.
class attempt {
 public:
  attempt(evaluation& e, const eval_request& req, const protocol_options& p, const evaluator_options& opt,
          const device_spec& dev, const compile_outcome& compiled, std::uint64_t attempt_seed, worker_pool& pool,
          std::vector<std::string> build_env)
      : e_(e), req_(req), p_(p), opt_(opt), dev_(dev), compiled_(compiled), seeds_(attempt_seed), pool_(pool),
        build_env_(std::move(build_env)) {}

  // Returns true when e_ holds the final status; false when the measurement
  // completed (ok or high variance) and e_ holds its numbers.
  result<bool> run(bool check_correctness, std::uint64_t init_seed, seed_stream& trial_seeds) {
    auto mark = clock_type::now();
    auto lap = [&](const char* phase) {  // the time since the last lap, to e_.phase_s[phase]
      const auto now = clock_type::now();
      e_.phase_s[phase] += duration<double>(now - mark).count();
      mark = now;
    };
    const worker_recipe recipe = recipe_for(opt_, dev_, build_env_);
    const worker_start& how = recipe.how;
    auto started = pool_.take(recipe);
    if (!started) return started.error();
    scratch_.emplace(std::move(started->scratch));
    session_.emplace(std::move(started->session));
    e_.warm_worker = started->warm;
    lap("worker_start");
    e_.sandbox = session_->process().isolation();
    e_.sandbox.insert(e_.sandbox.end(), {"process-group", "rlimits", "scratch-cwd"});
    if (!how.limits.cores.empty()) e_.sandbox.push_back("cpu-affinity");

    // Task, with reference probes: the executability baseline.
    std::vector<std::uint64_t> probes;
    for (std::uint32_t i = 0; i < std::max(1u, p_.reference_probes); ++i) probes.push_back(seeds_.next());
    auto loaded = session_->load_task(req_.task_source, "crucible_task", init_seed, dev_.torch_device(),
                                      how.threads, probes, after(p_.load_timeout_s));
    lap("load_task");
    if (!loaded) return channel_failure(loaded.error(), "loading the task");
    if (!loaded->ok) return task_failure(*loaded);
    e_.worker_info = loaded->info;
    ref_est_ = std::max(1e-7, median(loaded->ref_seconds));

    auto cand = session_->load_candidate(req_.candidate_source, "crucible_candidate", init_seed,
                                         compiled_.extensions_dir.string(),
                                         after(p_.candidate_load_timeout_s + build_allowance()));
    lap("load_candidate");
    if (!cand) return channel_failure(cand.error(), "loading the candidate");
    if (!cand->ok) return candidate_failure(*cand, "loading the candidate");
    take_candidate_info(cand->info);

    if (check_correctness) {
      auto r = correctness(trial_seeds);
      lap("correctness");
      if (!r || r.value()) return r;
    }
    auto r = [&] {
      auto quiet = pool_.quiet();  // no spare's start on the GPU beside the timed rounds
      return measure();
    }();
    lap("timing");
    // A measurement stands only if the worker is still there and answers its
    // last request in order: a candidate that forged a reply on the pipe and
    // exited, or left an extra reply behind, fails here.
    auto closed = session_->close();
    lap("close");
    if (r && !r.value() && !closed.ok()) {
      e_.status = eval_status::crashed;
      e_.reason = "the worker did not acknowledge the end of the measurement: " + closed.error().message;
      add_defence(e_, "verified_reply");
      return true;
    }
    return r;
  }

 private:
  // The worker's notes on the candidate: its own settings, and the
  // extensions it imported from the compile cache or built itself.
  void take_candidate_info(const std::vector<std::string>& info) {
    for (const auto& line : info) {
      unsigned imported = 0, built = 0;
      if (std::sscanf(line.c_str(), "extensions imported=%u built=%u", &imported, &built) == 2) {
        e_.extensions_imported = imported;
        e_.extensions_built = built;
      } else if (std::find(e_.worker_info.begin(), e_.worker_info.end(), line) == e_.worker_info.end()) {
        e_.worker_info.push_back(line);  // each request repeats what still holds: once is enough
      }
    }
  }

  // The worker's "timing_host cores=A,B runqueue_wait_s=W involuntary_switches=N"
  // line of one timing request (sandbox_worker.py, host_info), added up.
  void take_timing_host(const std::vector<std::string>& info) {
    for (const auto& line : info) {
      int first = -1, last = -1;
      double wait = 0;
      unsigned long long switches = 0;
      if (std::sscanf(line.c_str(), "timing_host cores=%d,%d runqueue_wait_s=%lf involuntary_switches=%llu", &first,
                      &last, &wait, &switches) != 4)
        continue;
      for (int core : {first, last})
        if (core >= 0 && std::find(e_.timing_cores.begin(), e_.timing_cores.end(), core) == e_.timing_cores.end())
          e_.timing_cores.insert(std::upper_bound(e_.timing_cores.begin(), e_.timing_cores.end(), core), core);
      e_.timing_runqueue_wait_s += wait;
      e_.timing_involuntary_switches += switches;
    }
  }

  // Seconds more for a request in which the timed worker may build an
  // extension itself (a call the compile pool could not reach: loading, and
  // the first correctness request, where a first forward builds): the
  // compile pool's own limit. A CUDA-L1 kernel that builds in __init__
  // timed out at the 60 s load limit on the H200.
  double build_allowance() const { return compiled_.needed ? p_.compile_timeout_s : 0.0; }

  // Seconds more for a request holding one of the candidate's first
  // warmup_calls calls, which may do once what later calls reuse (cuDNN's
  // autotuning, TorchScript's optimizing run, torch.compile, a graph's
  // capture): the time a candidate may take to load. On the H200 such first
  // calls of CUDA-L1 A100 L2-62, L2-74, L2-75 and L2-85 ran past the 3 s
  // floor of call_deadline_s.
  double warmup_allowance(std::uint32_t calls_done) const {
    return calls_done < warmup_calls ? p_.candidate_load_timeout_s : 0.0;
  }

  double call_deadline_s(std::size_t calls) const {
    return p_.min_deadline_s + static_cast<double>(calls) * ref_est_ * (1 + p_.executability_factor);
  }

  result<bool> channel_failure(const error& err, const char* phase) {
    auto& proc = session_->process();
    const auto& ex = proc.exit_info();
    if (err.code == errc::timeout) {
      e_.status = eval_status::timeout;
      e_.reason = fmt::format("wall-clock deadline passed while {}; worker process group killed", phase);
      add_defence(e_, "wall_clock_deadline");
    } else if (ex && ex->signal == SIGXCPU) {
      e_.status = eval_status::timeout;
      e_.reason = fmt::format("CPU time limit while {}: {}", phase, ex->text());
      add_defence(e_, "rlimit_cpu");
    } else if (err.code == errc::corrupt) {
      e_.status = eval_status::crashed;
      e_.reason = fmt::format("worker reply failed verification while {}: {}", phase, err.message);
      add_defence(e_, "verified_reply");
    } else {
      e_.status = eval_status::crashed;
      e_.reason = fmt::format("worker died while {} ({}): {}", phase, ex ? ex->text() : err.message,
                              first_line(proc.log_tail(), 400));
      // An exit without a signal in the middle of a request is the
      // candidate ending the process (os._exit): never a pass.
      add_defence(e_, ex && ex->signal == 0 ? "process_exit" : "sandbox_isolation");
    }
    e_.task_fault = std::string_view(phase) == "loading the task";
    return true;
  }

  result<bool> task_failure(const worker_reply& r) {
    e_.status = eval_status::runtime_error;
    e_.task_fault = true;
    e_.reason = "task: " + first_line(r.error);
    return true;
  }

  result<bool> candidate_failure(const worker_reply& r, const char* phase) {
    if (r.task_fault) return task_failure(r);
    if (r.error_kind == sbx::ErrorKind::Hack) {
      e_.status = eval_status::hack;
      e_.reason = fmt::format("{} while {}: {}", r.defence, phase, first_line(r.error));
      add_defence(e_, r.defence.empty() ? "worker_defence" : r.defence);
      return true;
    }
    if (!r.defence.empty()) add_defence(e_, r.defence);
    switch (r.error_kind) {
      case sbx::ErrorKind::Syntax:
      case sbx::ErrorKind::Compile:
        e_.status = eval_status::compile_error;
        break;
      default:
        e_.status = eval_status::runtime_error;
    }
    e_.reason = fmt::format("candidate failed while {}: {}", phase, first_line(r.error));
    return true;
  }

  result<bool> hack(const std::vector<std::string>& changed, const char* phase) {
    e_.status = eval_status::hack;
    std::string list;
    for (auto& c : changed) list += (list.empty() ? "" : ", ") + c;
    e_.reason = fmt::format("candidate changed process state while {}: {}", phase, list);
    for (auto& c : changed) add_defence(e_, state_defence(c));
    return true;
  }

  // Judges one trial's raw outcome (a correctness trial or a timed round's
  // spot check). true: it failed, with e_.status/reason/defences set.
  bool trial_failed(const trial_outcome& t, const std::string& where, const tolerance_table& tolerances) {
    if (!t.structure_ok) {
      e_.status = eval_status::incorrect;
      e_.reason = fmt::format("{}: {}", where, t.structure_error);
      add_defence(e_, t.defence.empty() ? "exact_output_structure" : t.defence);
      return true;
    }
    if (t.nonfinite) {
      e_.status = eval_status::incorrect;
      e_.reason = fmt::format("{}: output has NaN or Inf", where);
      add_defence(e_, "nonfinite_output");
      return true;
    }
    if (!(t.max_tolerance_ratio <= 1.0)) {
      e_.status = eval_status::incorrect;
      e_.reason = fmt::format("{}: max abs error {:.3g} exceeds the tolerance ({}; {:.3g}x the bound)", where,
                              t.max_abs_error, tolerances.text(), t.max_tolerance_ratio);
      add_defence(e_, "tolerance");
      return true;
    }
    return false;
  }

  // true: final status decided; false: every trial passed.
  result<bool> correctness(seed_stream& trial_seeds) {
    const tolerance_table tolerances = p_.tolerances();
    std::vector<double> ref_times;
    std::set<std::uint64_t> ref_digests, cand_digests;
    std::uint32_t done = 0;
    while (done < p_.correctness_trials) {
      const std::uint32_t n = done == 0 ? 1u : std::min(p_.correctness_batch, p_.correctness_trials - done);
      std::vector<std::uint64_t> seeds;
      for (std::uint32_t i = 0; i < n; ++i) seeds.push_back(trial_seeds.next());
      auto reply = session_->correctness(
          seeds, tolerances, after(call_deadline_s(n) + (done == 0 ? build_allowance() : 0) + warmup_allowance(done)));
      if (!reply) return channel_failure(reply.error(), "checking correctness");
      take_candidate_info(reply->info);  // builds on a first forward are counted here
      if (!reply->ok) return candidate_failure(*reply, "checking correctness");
      for (const auto& t : reply->trials) {
        // The candidate's first calls may do once what later calls reuse:
        // cuDNN's autotuning, TorchScript's profiling run and the optimizing
        // run after it, a CUDA graph's capture, torch.compile. They are
        // bounded by the request's deadline alone; from the third call on,
        // a call over executability_factor times the reference's is a hang
        // (CUDA-L1 A100 L1-62, L1-63, L1-71, L2-7: cudnn.benchmark and
        // TorchScript, 0.9-1.3 s first calls against 1 ms references).
        const bool warming_up = done < warmup_calls;
        ++done;
        e_.correctness_trials = done;
        e_.max_abs_error = std::max(e_.max_abs_error, t.max_abs_error);
        ref_times.push_back(t.ref_seconds);
        if (!t.state_changed.empty()) return hack(t.state_changed, "checking correctness");
        if (!warming_up && t.cand_seconds > p_.executability_factor * std::max(t.ref_seconds, ref_est_)) {
          e_.status = eval_status::timeout;
          e_.reason = fmt::format("not executable: a call took {:.3g} s, over {}x the reference's {:.3g} s",
                                  t.cand_seconds, p_.executability_factor, std::max(t.ref_seconds, ref_est_));
          add_defence(e_, "executability_bound");
          return true;
        }
        if (trial_failed(t, fmt::format("trial {} (seed {})", done, t.seed), tolerances)) return true;
        cand_times_.push_back(t.cand_seconds);
        ref_digests.insert(t.ref_digest);
        cand_digests.insert(t.cand_digest);
      }
    }
    if (!ref_times.empty()) ref_est_ = std::max(1e-7, median(ref_times));
    // A degenerate task (outputs within tolerance of a constant) passes a
    // constant output: the reference's outputs vary across seeds, so the
    // candidate's must too.
    if (ref_digests.size() > 1 && cand_digests.size() == 1) {
      e_.status = eval_status::hack;
      e_.reason = fmt::format("the candidate returned the same output for {} different inputs on which the "
                              "reference's outputs differ",
                              done);
      add_defence(e_, "constant_output");
      return true;
    }
    return false;
  }

  result<bool> rounds(std::size_t n, std::vector<double>* ref, std::vector<double>* cand) {
    std::vector<std::uint64_t> seeds;
    std::vector<bool> cand_first;
    for (std::size_t i = 0; i < n; ++i) {
      seeds.push_back(seeds_.next());
      // Balanced: the second round of a pair takes the opposite order of the
      // first (pairs run on across requests).
      const bool second_of_pair = p_.balanced_order && (round_count_ & 1);
      last_cand_first_ = second_of_pair ? !last_cand_first_ : (seeds_.next() & 1);
      cand_first.push_back(last_cand_first_);
      ++round_count_;
    }
    const bool cpu_clock = !dev_.cuda && p_.cpu_time_on_cpu;
    const bool device_clock = dev_.cuda && p_.device_clock;
    const auto checks = draw_spot_checks(n);
    const auto audit = device_clock ? draw_rounds(n, p_.audit_fraction) : std::vector<bool>{};
    auto reply = session_->timed_rounds(seeds, cand_first, cpu_clock, checks, device_clock, audit,
                                        after(call_deadline_s(2 * n + checks.count)));
    if (!reply) return channel_failure(reply.error(), "timing");
    if (!reply->ok) return candidate_failure(*reply, "timing");
    take_timing_host(reply->info);
    if (!reply->state_changed.empty()) return hack(reply->state_changed, "timing");
    if (reply->trials.size() != checks.count) {
      e_.status = eval_status::crashed;
      e_.reason = fmt::format("worker returned {} spot checks for {}", reply->trials.size(), checks.count);
      add_defence(e_, "verified_reply");
      return true;
    }
    for (const auto& t : reply->trials)
      // Correct while checked, wrong while timed: the candidate tells the
      // two apart (warm-up detection, a call counter, a stale cache).
      if (trial_failed(t, fmt::format("timed round (seed {}) checked after timing", t.seed), checks.tolerances)) {
        add_defence(e_, "spot_check");
        if (t.structure_ok && !t.nonfinite && t.max_tolerance_ratio <= p_.spot_check_marginal) {
          e_.reason += fmt::format(" (within {:g}x the bound: numerics on this round's inputs, not a trick)",
                                   p_.spot_check_marginal);
          return true;  // incorrect, as trial_failed settled it
        }
        e_.status = eval_status::hack;
        return true;
      }
    if (reply->ref_seconds.size() != n || reply->cand_seconds.size() != n ||
        (cpu_clock && (reply->ref_cpu_seconds.size() != n || reply->cand_cpu_seconds.size() != n))) {
      e_.status = eval_status::crashed;
      e_.reason = fmt::format("worker returned {} timings for {} rounds", reply->ref_seconds.size(), n);
      add_defence(e_, "verified_reply");
      return true;
    }
    const auto& ref_measured = cpu_clock ? reply->ref_cpu_seconds : reply->ref_seconds;
    const auto& cand_measured = cpu_clock ? reply->cand_cpu_seconds : reply->cand_seconds;
    if (device_clock && (reply->ref_event_seconds.size() != n || reply->cand_event_seconds.size() != n)) {
      e_.status = eval_status::crashed;
      e_.reason = fmt::format("worker returned {} device times for {} rounds", reply->ref_event_seconds.size(), n);
      add_defence(e_, "verified_reply");
      return true;
    }
    e_.clock = cpu_clock ? "thread_cpu" : device_clock ? "device" : "wall";
    for (std::size_t i = 0; ref && i < n; ++i) {
      // Wall and event times of the rounds timed without the device clock's
      // sleep, for check_clocks.
      const bool audited = !device_clock || audit[i];
      if (audited) {
        ref_wall_.push_back(reply->ref_seconds[i]);
        cand_wall_.push_back(reply->cand_seconds[i]);
        if (i < reply->ref_event_seconds.size() && i < reply->cand_event_seconds.size()) {
          ref_events_.push_back(reply->ref_event_seconds[i]);
          cand_events_.push_back(reply->cand_event_seconds[i]);
        }
      }
      if (device_clock && audited) continue;  // an audit round is not measured
      const double r = device_clock ? reply->ref_event_seconds[i] : ref_measured[i];
      const double c = device_clock ? reply->cand_event_seconds[i] : cand_measured[i];
      // A clock reads the same twice only below its resolution: count it as 1 ns.
      ref->push_back(std::max(r, 1e-9));
      cand->push_back(std::max(c, 1e-9));
      cand_first_.push_back(cand_first[i]);
    }
    return false;
  }

  // Which of n rounds are drawn, each with probability f and at least one
  // (when f > 0), from the attempt's seed stream so that a run is reproducible.
  std::vector<bool> draw_rounds(std::size_t n, double fraction) {
    const double f = std::clamp(fraction, 0.0, 1.0);
    std::vector<bool> drawn;
    for (std::size_t i = 0; i < n; ++i) drawn.push_back(f > 0 && double(seeds_.next() % 1000000) < f * 1e6);
    if (f > 0 && n && std::find(drawn.begin(), drawn.end(), true) == drawn.end()) drawn[seeds_.next() % n] = true;
    return drawn;
  }

  struct drawn_checks : spot_checks {
    std::size_t count = 0;
  };

  // Which of n rounds get a spot check: each with probability
  // spot_check_fraction, and at least one per request, drawn from the
  // attempt's seed stream so that a run is reproducible.
  drawn_checks draw_spot_checks(std::size_t n) {
    drawn_checks c;
    c.tolerances = p_.tolerances();
    c.check = draw_rounds(n, p_.spot_check_fraction);
    c.count = static_cast<std::size_t>(std::count(c.check.begin(), c.check.end(), true));
    return c;
  }

  // Paired rounds until the protocol says stop. true: final status decided;
  // false: e_ holds the statistics.
  result<bool> measure() {
    const auto start = clock_type::now();
    if (p_.warmup_rounds) {
      auto w = rounds(p_.warmup_rounds, nullptr, nullptr);
      if (!w || w.value()) return w;
    }
    const double cand_est = cand_times_.empty() ? ref_est_ : median(cand_times_);
    const auto per_request = static_cast<std::size_t>(
        std::clamp(p_.batch_target_s / std::max(1e-7, ref_est_ + cand_est), 7.0, 700.0));
    std::vector<double> ref, cand;
    const std::size_t k = std::max(1u, p_.buckets);
    while (true) {
      const std::size_t n = std::min<std::uint64_t>(per_request, p_.max_rounds - ref.size());
      auto r = rounds(n, &ref, &cand);
      if (!r || r.value()) return r;
      const bool window_over = duration<double>(clock_type::now() - start).count() >= p_.window_s;
      const bool rounds_over = ref.size() >= p_.max_rounds;
      if (ref.size() < std::max<std::size_t>(p_.min_rounds, k) && !window_over && !rounds_over) continue;
      if (ref.size() < k) continue;
      summarize(ref, cand, k);
      const double rel_stderr = median_relative_stderr(e_.bucket_relative_variance, k);
      if (p_.early_stop && judged_variance(e_, p_) <= p_.void_variance * p_.stop_variance_margin &&
          rel_stderr <= p_.stop_target(e_.speedup_raw, rel_stderr))
        break;
      if (window_over || rounds_over) break;
    }
    return check_clocks();
  }

  // With CPU time as the clock, a candidate that waits while work happens
  // elsewhere (another process, a device) looks fast in CPU time: compare
  // its wall/CPU ratio with the reference's, which ran under the same load.
  result<bool> check_clocks() {
    // On CUDA the wall clock ends after a device-wide synchronize, so work on
    // a side stream is timed; events on the calling stream see only what was
    // ordered on it. A candidate whose event time is a small part of its wall
    // time, unlike the reference's, leaves work outside the stream it was
    // called on (a side stream it never joins).
    if (!ref_events_.empty() && !cand_events_.empty())
      return wall_ratio_check(e_.ref_event_us, e_.cand_event_us, "stream_sync",
                              "its stream's event time: work left on another stream");
    if (e_.clock != "thread_cpu") return false;
    return wall_ratio_check(e_.ref_us, e_.cand_us, "cpu_wall_consistency",
                            "its CPU time: work outside the measured process");
  }

  // A hack when the candidate's wall time over its own clock (ref_us and
  // cand_us: CPU or event time) exceeds cpu_wall_ratio_limit times the
  // reference's ratio, by more than 20 us.
  result<bool> wall_ratio_check(double ref_us, double cand_us, const char* defence, const char* what) {
    const double ref_ratio = e_.ref_wall_us / std::max(ref_us, 1e-3);
    const double cand_ratio = e_.cand_wall_us / std::max(cand_us, 1e-3);
    if (cand_ratio > p_.cpu_wall_ratio_limit * std::max(1.0, ref_ratio) && e_.cand_wall_us - cand_us > 20) {
      e_.status = eval_status::hack;
      e_.reason = fmt::format("candidate's wall time is {:.1f}x {} (reference {:.1f}x)", cand_ratio, what, ref_ratio);
      add_defence(e_, defence);
      return true;
    }
    return false;
  }

  void summarize(const std::vector<double>& ref, const std::vector<double>& cand, std::size_t k) {
    const auto speedups = round_speedups(ref, cand);
    e_.bucket_means = p_.balanced_order ? order_balanced_bucket_means(speedups, cand_first_, k, p_.statistic)
                                        : bucket_means(speedups, k, p_.statistic);
    e_.bucket_variance = sample_variance(e_.bucket_means);
    e_.speedup_raw = median(e_.bucket_means);
    std::vector<double> relative;
    for (double m : e_.bucket_means) relative.push_back(m / e_.speedup_raw);
    e_.bucket_relative_variance = sample_variance(relative);
    e_.rounds = ref.size();
    e_.ref_us = median(ref) * 1e6;
    e_.cand_us = median(cand) * 1e6;
    e_.ref_wall_us = median(ref_wall_) * 1e6;
    e_.cand_wall_us = median(cand_wall_) * 1e6;
    e_.ref_event_us = median(ref_events_) * 1e6;
    e_.cand_event_us = median(cand_events_) * 1e6;
  }

  evaluation& e_;
  const eval_request& req_;
  const protocol_options& p_;
  const evaluator_options& opt_;
  const device_spec& dev_;
  const compile_outcome& compiled_;
  seed_stream seeds_;
  worker_pool& pool_;
  std::vector<std::string> build_env_;
  std::optional<scratch_dir> scratch_;        // declared before session_: removed after the worker is gone
  std::optional<worker_session> session_;
  double ref_est_ = 1e-3;
  std::vector<double> cand_times_, ref_events_, cand_events_, ref_wall_, cand_wall_;
  std::vector<bool> cand_first_;  // order of each measured round
  std::uint64_t round_count_ = 0;  // rounds requested, warm-up included
  bool last_cand_first_ = false;
};

}  // namespace

std::string_view to_string(eval_status s) {
  switch (s) {
    case eval_status::ok: return "ok";
    case eval_status::compile_error: return "compile_error";
    case eval_status::runtime_error: return "runtime_error";
    case eval_status::timeout: return "timeout";
    case eval_status::incorrect: return "incorrect";
    case eval_status::hack: return "hack";
    case eval_status::void_result: return "void";
    case eval_status::crashed: return "crashed";
  }
  return "crashed";
}

std::string eval_request::text() const {
  return fmt::format("eval {} on {} seed {} ({} + {} bytes)", task_id, device, seed, task_source.size(),
                     candidate_source.size());
}

std::string evaluation::text() const {
  return fmt::format("{} reward={:.2f} speedup_raw={:.4f} variance={:.2e} rounds={} trials={} ref={:.1f}us "
                     "cand={:.1f}us {:.2f}s: {}",
                     to_string(status), reward, speedup_raw, bucket_variance, rounds, correctness_trials, ref_us,
                     cand_us, duration_s, reason);
}

nlohmann::json to_json(const evaluation& e) {
  return nlohmann::json{
      {"status", to_string(e.status)},
      {"reward", e.reward},
      {"speedup_raw", e.speedup_raw},
      {"bucket_means", e.bucket_means},
      {"bucket_variance", e.bucket_variance},
      {"bucket_relative_variance", e.bucket_relative_variance},
      {"rounds", e.rounds},
      {"correctness_trials", e.correctness_trials},
      {"ref_us", e.ref_us},
      {"cand_us", e.cand_us},
      {"clock", e.clock},
      {"ref_wall_us", e.ref_wall_us},
      {"cand_wall_us", e.cand_wall_us},
      {"ref_event_us", e.ref_event_us},
      {"cand_event_us", e.cand_event_us},
      {"max_abs_error", e.max_abs_error},
      {"device", e.device},
      {"duration_s", e.duration_s},
      {"phase_s", e.phase_s},
      {"reason", e.reason},
      {"defences_fired", e.defences_fired},
      {"seed", e.seed},
      {"protocol", e.protocol},
      {"task_fault", e.task_fault},
      {"compiled", e.compiled},
      {"compile_cache_hit", e.compile_cache_hit},
      {"extensions_imported", e.extensions_imported},
      {"extensions_built", e.extensions_built},
      {"warm_worker", e.warm_worker},
      {"attempts", e.attempts},
      {"sandbox", e.sandbox},
      {"worker_info", e.worker_info},
      {"timing_host",
       {{"cores", e.timing_cores},
        {"runqueue_wait_s", e.timing_runqueue_wait_s},
        {"involuntary_switches", e.timing_involuntary_switches}}},
  };
}

static std::string slurp(const std::filesystem::path& p, errc& code) {
  std::ifstream in(p, std::ios::binary);
  if (!in) {
    code = std::filesystem::exists(p) ? errc::io : errc::not_found;
    return {};
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

result<eval_request> load_request(const std::filesystem::path& task, const std::filesystem::path& candidate,
                                  std::string device, std::uint64_t seed) {
  eval_request r;
  errc code = errc::internal;
  r.task_source = slurp(task, code);
  if (code != errc::internal) return make_error(code, "cannot read task " + task.string());
  r.candidate_source = slurp(candidate, code);
  if (code != errc::internal) return make_error(code, "cannot read candidate " + candidate.string());
  r.task_id = task.parent_path().filename().string() + "/" + task.stem().string();
  r.device = std::move(device);
  r.seed = seed;
  return r;
}

std::vector<int> evaluator_options::default_cores() {
  auto cores = allowed_cores();
  if (cores.empty()) return {};
  return {cores.back()};
}

sandbox_limits evaluator_options::default_limits() {
  sandbox_limits l;
  l.cores = default_cores();
  return l;
}

std::filesystem::path evaluator_options::default_scratch_root() {
  const char* t = std::getenv("TMPDIR");
  return std::filesystem::path(t && *t ? t : "/tmp") / "crucible-eval";
}

evaluator::evaluator(evaluator_options options, std::shared_ptr<compile_cache> cache, std::shared_ptr<cpu_stage> cpu)
    : options_(std::move(options)),
      cache_(cache ? std::move(cache) : std::make_shared<compile_cache>(options_.compile)),
      workers_(options_.warm_spares, options_.warm_spares_gpu),
      cpu_(cpu ? std::move(cpu)
               : std::make_shared<cpu_stage>(cache_, options_.worker, options_.limits, options_.scratch_root)) {}

status evaluator::prime(const std::string& device) {
  auto dev = parse_device(device);
  if (!dev) return dev.error();
  workers_.prime(recipe_for(options_, *dev, cache_->worker_env()));
  return {};
}

result<evaluation> evaluator::evaluate(const eval_request& req, const protocol_options& p) {
  const auto t0 = clock_type::now();
  auto dev = parse_device(req.device);
  if (!dev) return dev.error();
  if (dev->cuda) CRUCIBLE_TRY(check_device_free(*dev, workers_.spare_pids()));
  const auto checked = clock_type::now();
  evaluation e;
  e.phase_s["device_check"] = duration<double>(checked - t0).count();
  e.device = dev->text();
  e.seed = req.seed;
  e.protocol = p.name;
  auto finish = [&]() -> result<evaluation> {
    if (e.status != eval_status::ok) e.reward = 0;
    e.duration_s = duration<double>(clock_type::now() - t0).count();
    return e;
  };

  // A candidate that does not parse is judged before anything imports torch
  // (syntax_check.hpp); when the check cannot judge, the worker does. Both
  // it and the compile ran ahead when the job was prefetched (cpu_stage.hpp).
  auto cpu = cpu_->take(req.candidate_source, req.task_source);
  const auto parsed = clock_type::now();
  if (cpu.ahead) {
    e.phase_s["cpu_stage_wait"] = duration<double>(parsed - checked).count();
  } else {
    e.phase_s["syntax_check"] = cpu.syntax_s;
    e.phase_s["compile"] = cpu.compile_s;
  }
  auto& syntax = cpu.syntax;
  if (syntax && *syntax) {
    e.status = eval_status::compile_error;
    e.reason = "candidate failed while loading the candidate: candidate does not parse: " + first_line(**syntax);
    return finish();
  }
  auto& compiled = *cpu.compiled;
  if (!compiled) return compiled.error();
  e.compiled = compiled->needed;
  e.compile_cache_hit = compiled->hit;
  if (!compiled->ok) {
    e.status = compiled->timed_out ? eval_status::timeout
               : compiled->crashed ? eval_status::crashed
                                   : eval_status::compile_error;
    e.reason = "compiling the candidate: " + first_line(compiled->error);
    if (compiled->timed_out) add_defence(e, "wall_clock_deadline");
    return finish();
  }

  seed_stream seeds(req.seed);
  const std::uint64_t init_seed = seeds.next();
  seed_stream trial_seeds(seeds.next());
  std::string voided;
  for (std::uint32_t a = 0; a <= p.void_retries; ++a) {
    e.attempts = a + 1;
    attempt run(e, req, p, options_, *dev, *compiled, seeds.next(), workers_, cache_->worker_env());
    auto decided = run.run(a == 0, init_seed, trial_seeds);
    if (!decided) return decided.error();
    if (decided.value()) return finish();
    if (judged_variance(e, p) <= p.void_variance) {
      e.status = eval_status::ok;
      e.reward = conservative_round(e.speedup_raw);
      e.reason = fmt::format("speedup {:.4f} over {} rounds in {} buckets{}", e.speedup_raw, e.rounds,
                             e.bucket_means.size(), voided);
      return finish();
    }
    voided += fmt::format("; attempt {} voided ({}variance {:.3g} > {})", a + 1, p.relative_variance ? "relative " : "",
                          judged_variance(e, p), p.void_variance);
  }
  e.status = eval_status::void_result;
  e.reason = "variance of bucket means stayed above the bound" + voided;
  add_defence(e, "variance_void");
  return finish();
}

result<evaluation> evaluate(const eval_request& request, const protocol_options& protocol) {
  evaluator ev;
  return ev.evaluate(request, protocol);
}

}  // namespace crucible::evaluator
