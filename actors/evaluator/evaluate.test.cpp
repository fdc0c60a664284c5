// The evaluator end to end on the project's CPU task set (configs/tasks/cpu):
// real Python workers, real sandboxes, real timing. Tests check statuses and
// rewards, never how long anything took.
#include "actors/evaluator/evaluate.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "actors/evaluator/scratch.hpp"
#include "actors/evaluator/statistics.hpp"
#include "runtime/base/error_text.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

using namespace crucible::evaluator;

namespace {

const std::filesystem::path tasks = std::filesystem::path(CRUCIBLE_SOURCE_DIR) / "configs/tasks";

protocol_options quick() { return protocol_by_name("quick").value(); }

// quick with the void bound off: what the tests whose subject is not the
// void rule measure with, so that a noisy moment of this shared machine
// (both attempts' bucket means spread past the bound) cannot turn their
// `ok` into `void`. The void rule has its own test, with a bound no
// measurement meets.
protocol_options steady() {
  auto p = quick();
  p.void_variance = 1e9;
  return p;
}

evaluation run(evaluator& ev, const std::filesystem::path& task, const std::filesystem::path& candidate,
               const protocol_options& p = steady(), std::uint64_t seed = 7) {
  auto req = load_request(task, candidate, "cpu", seed);
  REQUIRE_MESSAGE(req.ok(), crucible::error_text(req));
  auto r = ev.evaluate(*req, p);
  REQUIRE_MESSAGE(r.ok(), crucible::error_text(r));
  return r.value();
}

evaluation run_cpu(const std::string& task, const std::string& variant, const protocol_options& p = steady()) {
  evaluator ev;
  return run(ev, tasks / "cpu" / task / "task.py", tasks / "cpu" / task / (variant + ".py"), p);
}

// The status each variant must get, by the start of its file name.
struct expectation {
  eval_status status;
  const char* reward;  // "above", "one", "below", "zero", or "any" (a success whose size is not claimed)
};

const std::map<std::string, expectation> expected = {
    {"faster", {eval_status::ok, "above"}},          {"equal", {eval_status::ok, "one"}},
    {"slower", {eval_status::ok, "below"}},          {"incorrect", {eval_status::incorrect, "zero"}},
    {"nan_output", {eval_status::incorrect, "zero"}}, {"wrong_shape", {eval_status::incorrect, "zero"}},
    {"non_tensor", {eval_status::incorrect, "zero"}}, {"crashing", {eval_status::crashed, "zero"}},
    {"hanging", {eval_status::timeout, "zero"}},      {"not_compiling", {eval_status::compile_error, "zero"}},
    {"memory_hungry", {eval_status::runtime_error, "zero"}},
    {"no_modelnew", {eval_status::runtime_error, "zero"}},
    {"thread_change", {eval_status::hack, "zero"}},   {"inline_kernel", {eval_status::ok, "any"}},
};

// The variant tests check classification and rewards. Whether a measurement
// is void depends on how steady this shared machine is while it runs (a
// matmul and an elementwise rewrite react differently when the other core
// gets busy), so they switch the void bound off; the void path has its own
// test below, with a bound no measurement can meet.
protocol_options classify() {
  auto p = steady();
  p.window_s = 10;
  return p;
}

// An identity on CPU: its reward is its rounded raw speedup, and the raw
// speedup is within 0.02 of 1 plus 10 of the standard errors its own bucket
// means state (statistics.hpp, median_relative_stderr; with the 6 degrees
// of freedom of 7 buckets' variance, odds of about 6e-5 against). The 0.02
// is the systematic offset CPU identities have shown and no number of
// rounds removes (0.9862 to 1.0147 on the 2-core VMs: the process's memory
// layout, docs/benchmarks.md); a fixed 0.02 alone failed where a loaded
// machine's window ended before the early stop. On the GPU identities
// settle at 1.00 (docs/benchmarks.md, all 250 of KernelBench).
void check_identity(const evaluation& e) {
  const double se = median_relative_stderr(e.bucket_relative_variance, e.bucket_means.size());
  INFO("identity raw " << e.speedup_raw << ", stated relative standard error " << se);
  CHECK(e.reward == doctest::Approx(conservative_round(e.speedup_raw)));
  CHECK(std::abs(e.speedup_raw - 1.0) <= 0.02 + 10 * se * e.speedup_raw);
}

void check_every_variant(const std::string& task, const std::vector<std::string>& skip = {}) {
  evaluator ev;
  int seen = 0;
  std::vector<std::filesystem::path> files;
  for (auto& f : std::filesystem::directory_iterator(tasks / "cpu" / task)) files.push_back(f.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    const std::string stem = f.stem().string();
    if (f.extension() != ".py" || stem == "task" ||
        std::find(skip.begin(), skip.end(), stem) != skip.end())
      continue;
    const auto it = std::find_if(expected.begin(), expected.end(),
                                 [&](auto& kv) { return stem.rfind(kv.first, 0) == 0; });
    REQUIRE_MESSAGE(it != expected.end(), "no expectation for variant " << stem);
    const evaluation e = run(ev, tasks / "cpu" / task / "task.py", f, classify());
    const std::string want = it->second.reward;
    INFO(task << "/" << stem << ": " << e.text());
    CHECK(to_string(e.status) == to_string(it->second.status));
    CHECK_FALSE(e.reason.empty());
    if (want == "above") CHECK(e.reward > 1.0);
    if (want == "one") check_identity(e);
    if (want == "below") CHECK((e.reward > 0 && e.reward < 1.0));
    if (want == "zero") CHECK(e.reward == 0);
    if (e.status == eval_status::ok) {
      CHECK(e.bucket_means.size() == 7);
      CHECK(e.correctness_trials == quick().correctness_trials);
      CHECK(e.rounds >= quick().min_rounds);
    }
    ++seen;
  }
  CHECK(seen >= 7);
}

}  // namespace

TEST_CASE("every variant of diag_matmul gets its status") { check_every_variant("diag_matmul"); }
TEST_CASE("every variant of chain_matmul gets its status") { check_every_variant("chain_matmul"); }
// inline_kernel and not_compiling_inline compile C++; the compile cache test runs them.
TEST_CASE("every variant of scale_relu gets its status") {
  check_every_variant("scale_relu", {"inline_kernel", "not_compiling_inline"});
}
TEST_CASE("every variant of softmax_manual gets its status") { check_every_variant("softmax_manual"); }
TEST_CASE("every variant of sum_of_product gets its status") { check_every_variant("sum_of_product"); }
TEST_CASE("every variant of layernorm_manual gets its status") { check_every_variant("layernorm_manual"); }
TEST_CASE("every variant of linear_slice gets its status") { check_every_variant("linear_slice"); }
TEST_CASE("every variant of gelu_tanh gets its status") { check_every_variant("gelu_tanh"); }

TEST_CASE("the default protocol settles a faster candidate above 1 after its full correctness budget") {
  const auto p = protocol_by_name("default").value();
  const evaluation e = run_cpu("chain_matmul", "faster", p);
  INFO(e.text());
  CHECK(e.status == eval_status::ok);
  CHECK(e.reward > 1.0);
  CHECK(e.correctness_trials == 32);
  CHECK(e.protocol == "default");
  CHECK(e.rounds >= p.min_rounds);
  // Where its time went: every step is reported, and together they fit in its duration.
  double steps = 0;
  for (const char* phase : {"device_check", "compile", "load_task", "load_candidate", "correctness", "timing", "close"}) {
    CHECK_MESSAGE(e.phase_s.contains(phase), phase);
    steps += e.phase_s.contains(phase) ? e.phase_s.at(phase) : 0;
  }
  CHECK(steps <= e.duration_s);
  CHECK(e.phase_s.at("timing") > 0);
  // The measuring thread was on the measuring cores at every timing
  // request's start and end (its host state is in the JSON for comparing passes).
  REQUIRE_FALSE(e.timing_cores.empty());
  const auto measuring = evaluator_options::default_cores();
  for (int core : e.timing_cores)
    CHECK_MESSAGE((measuring.empty() || std::find(measuring.begin(), measuring.end(), core) != measuring.end()),
                  "timed on core ", core);
  CHECK(e.timing_runqueue_wait_s >= 0);
  CHECK(to_json(e)["timing_host"]["cores"] == e.timing_cores);
}

TEST_CASE("the same evaluation three times agrees within the error its bucket means state") {
  // A candidate that does the reference's work twice: near 0.5, far enough
  // from 1 that the early stop settles it at a 1% standard error. The bound
  // is what the evaluations state, not what one machine gave: the standard
  // error of a median of 7 bucket means is 1.2533 sd / sqrt(7) (the stop
  // rule's own number), with sd pooled over the three runs (18 degrees of
  // freedom: a difference beyond 8 standard errors has odds under 1e-6).
  // Conservative rounding moves each reward by less than one step (0.01).
  // A protocol whose runs carried a bias their buckets do not show (warm-up,
  // an order effect fixed by the seed) fails here. A fixed 0.01 failed on a
  // loaded 2-core CI machine with 0.48, 0.50 and 0.49.
  std::vector<double> rewards, raws, relative_variances;
  for (int i = 0; i < 3; ++i) {
    const evaluation e = run_cpu("chain_matmul", "slower");
    INFO(e.text());
    REQUIRE(e.status == eval_status::ok);
    REQUIRE(e.bucket_means.size() == 7);
    // The reward is the median of the bucket means, rounded toward 1.00.
    CHECK(e.speedup_raw == doctest::Approx(median(e.bucket_means)));
    CHECK(e.reward == doctest::Approx(conservative_round(e.speedup_raw)));
    rewards.push_back(e.reward);
    raws.push_back(e.speedup_raw);
    relative_variances.push_back(e.bucket_relative_variance);
  }
  const double relative_stderr =
      median_relative_stderr((relative_variances[0] + relative_variances[1] + relative_variances[2]) / 3, 7);
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j) {
      const double bound = 8 * std::sqrt(2.0) * relative_stderr * std::max(raws[i], raws[j]) + 0.01 + 1e-9;
      INFO(rewards[i] << " against " << rewards[j] << " (raw " << raws[i] << ", " << raws[j]
                      << "), bound " << bound << ", relative standard error " << relative_stderr);
      CHECK(std::abs(rewards[i] - rewards[j]) <= bound);
    }
}

TEST_CASE("a measurement whose bucket means spread more than the bound is retried once and then void") {
  auto p = quick();
  p.void_variance = 0;  // real rounds never give seven identical bucket means
  p.window_s = 5;
  const evaluation e = run_cpu("chain_matmul", "equal", p);
  INFO(e.text());
  CHECK(e.status == eval_status::void_result);
  CHECK(e.attempts == 2);
  CHECK(e.reward == 0);
  CHECK(e.speedup_raw > 0);
  CHECK(e.bucket_means.size() == 7);
  CHECK(std::find(e.defences_fired.begin(), e.defences_fired.end(), "variance_void") != e.defences_fired.end());
  CHECK(e.reason.find("attempt 2 voided") != std::string::npos);
}

TEST_CASE("the evaluator survives crashing, hanging and memory-hungry candidates and then measures a good one") {
  evaluator ev;
  const auto dir = tasks / "cpu" / "chain_matmul";
  CHECK(run(ev, dir / "task.py", dir / "crashing.py").status == eval_status::crashed);
  CHECK(run(ev, dir / "task.py", dir / "hanging.py").status == eval_status::timeout);
  const evaluation hog = run(ev, dir / "task.py", dir / "memory_hungry.py");
  INFO(hog.reason);
  CHECK(hog.status == eval_status::runtime_error);
  CHECK(hog.reason.find("memory") != std::string::npos);
  const evaluation good = run(ev, dir / "task.py", dir / "faster.py");
  CHECK(good.status == eval_status::ok);
  CHECK(good.reward > 1.0);
  CHECK(good.warm_worker);  // the spare started while the hostile ones ran, untouched by them
}

namespace {
std::string info_value(const evaluation& e, const std::string& key) {
  for (const auto& line : e.worker_info)
    if (line.rfind(key + "=", 0) == 0) return line.substr(key.size() + 1);
  return {};
}
}  // namespace

TEST_CASE("warm workers are the default, and a worker never serves a second candidate") {
  evaluator ev;
  const auto dir = tasks / "cpu" / "scale_relu";
  const auto marks = std::filesystem::path(CRUCIBLE_SOURCE_DIR) / "tests/evaluator";
  const evaluation first = run(ev, dir / "task.py", marks / "leave_marker.py");
  INFO(first.text());
  CHECK(first.status == eval_status::ok);
  CHECK_FALSE(first.warm_worker);  // the evaluator's first worker starts when it is needed
  // find_marker.py returns zeros in a worker where leave_marker.py ran.
  const evaluation second = run(ev, dir / "task.py", marks / "find_marker.py");
  INFO(second.text());
  CHECK(second.status == eval_status::ok);
  CHECK(second.warm_worker);
  CHECK(second.phase_s.contains("worker_start"));
  CHECK(!info_value(first, "pid").empty());
  CHECK(info_value(first, "pid") != info_value(second, "pid"));
  // The cold start is still there, for --compare-cold.
  evaluator_options cold;
  cold.warm_spares = cold.warm_spares_gpu = 0;
  evaluator cold_ev(cold);
  const evaluation c1 = run(cold_ev, dir / "task.py", dir / "equal.py");
  const evaluation c2 = run(cold_ev, dir / "task.py", dir / "equal.py");
  CHECK(c1.status == eval_status::ok);
  CHECK_FALSE(c2.warm_worker);
}

TEST_CASE("a task whose reference updates its BatchNorm statistics: identity is ok near 1.00 within its stated error, no defence fired") {
  // What this checks is that reference_integrity compares like with like
  // (the reference's own updates are not a candidate's tampering) and that
  // the re-based buffers cost neither side time. Exactly 1.00 is the GPU's
  // target; on the 2-core CI VM one run measured 0.9862 over 4,788 rounds,
  // a systematic offset (of the process's memory layout, as far as is
  // known) that more rounds do not remove, so CPU is held to check_identity's
  // bound, as the variants' identities are.
  evaluator ev;
  const auto root = std::filesystem::path(CRUCIBLE_SOURCE_DIR);
  const evaluation e = run(ev, root / "tests/hacks/tasks/batchnorm_train.py",
                           root / "tests/hacks/legit/batchnorm_identity.py");
  INFO(e.text());
  CHECK(e.status == eval_status::ok);
  check_identity(e);
  CHECK(e.defences_fired.empty());
}

TEST_CASE("a task without Model or get_inputs is the task's fault, with a reason that names what is missing") {
  evaluator ev;
  const auto good = tasks / "cpu" / "diag_matmul" / "equal.py";
  const evaluation no_model = run(ev, tasks / "bad" / "task_without_model.py", good);
  CHECK(no_model.status == eval_status::runtime_error);
  CHECK(no_model.task_fault);
  CHECK(no_model.reason.find("Model") != std::string::npos);
  const evaluation no_inputs = run(ev, tasks / "bad" / "task_without_get_inputs.py", good);
  CHECK(no_inputs.status == eval_status::runtime_error);
  CHECK(no_inputs.task_fault);
  CHECK(no_inputs.reason.find("get_inputs") != std::string::npos);
  const evaluation non_tensor = run(ev, tasks / "bad" / "task_returning_non_tensor.py", good);
  CHECK(non_tensor.status == eval_status::runtime_error);
  CHECK(non_tensor.task_fault);
  CHECK(non_tensor.reason.find("not tensors") != std::string::npos);
}

TEST_CASE("bad candidates get a clear status and reason") {
  const evaluation no_new = run_cpu("layernorm_manual", "no_modelnew");
  CHECK(no_new.status == eval_status::runtime_error);
  CHECK_FALSE(no_new.task_fault);
  CHECK(no_new.reason.find("ModelNew") != std::string::npos);
  const evaluation syntax = run_cpu("diag_matmul", "not_compiling");
  CHECK(syntax.status == eval_status::compile_error);
  CHECK(syntax.reason.find("SyntaxError") != std::string::npos);
  const evaluation shape = run_cpu("diag_matmul", "wrong_shape");
  CHECK(shape.status == eval_status::incorrect);
  CHECK(shape.reason.find("(2048, 32)") != std::string::npos);
  CHECK(std::find(shape.defences_fired.begin(), shape.defences_fired.end(), "exact_output_structure") !=
        shape.defences_fired.end());
  const evaluation scalar = run_cpu("sum_of_product", "non_tensor");
  CHECK(scalar.status == eval_status::incorrect);
  CHECK(scalar.reason.find("float") != std::string::npos);
  const evaluation nan = run_cpu("softmax_manual", "nan_output");
  CHECK(nan.status == eval_status::incorrect);
  CHECK(nan.reason.find("NaN") != std::string::npos);
}

TEST_CASE("a candidate that does not parse is judged before any worker imports torch") {
  const evaluation syntax = run_cpu("diag_matmul", "not_compiling");
  INFO(syntax.text());
  CHECK(syntax.status == eval_status::compile_error);
  CHECK(syntax.reward == 0);
  CHECK(syntax.reason.find("candidate does not parse") != std::string::npos);
  CHECK(syntax.reason.find("<crucible_candidate>") != std::string::npos);
  CHECK(syntax.reason.find("SyntaxError") != std::string::npos);
  CHECK(syntax.phase_s.contains("syntax_check"));
  CHECK_FALSE(syntax.phase_s.contains("load_task"));
  // A candidate that parses goes on to the measuring worker.
  const evaluation parses = run_cpu("diag_matmul", "incorrect");
  CHECK(parses.status == eval_status::incorrect);
  CHECK(parses.phase_s.contains("syntax_check"));
  CHECK(parses.phase_s.contains("load_task"));
}

// An evaluator with a compile cache of its own, removed with `cache`.
// Options whose compile cache is a fresh directory, held by `cache`.
evaluator_options fresh_cache_options(std::optional<scratch_dir>& cache) {
  auto dir = scratch_dir::create(std::filesystem::temp_directory_path() / "crucible-eval-test", "cache");
  REQUIRE(dir.ok());
  cache.emplace(std::move(dir.value()));
  evaluator_options opt;
  opt.compile.root = cache->path();
  return opt;
}

evaluator fresh_cache_evaluator(std::optional<scratch_dir>& cache) { return evaluator(fresh_cache_options(cache)); }

TEST_CASE("an inline extension compiles once, and a broken one is a compile error, both cached") {
  std::optional<scratch_dir> cache;
  evaluator ev = fresh_cache_evaluator(cache);
  const auto dir = tasks / "cpu" / "scale_relu";
  const evaluation first = run(ev, dir / "task.py", dir / "inline_kernel.py");
  INFO(first.text());
  CHECK(first.status == eval_status::ok);
  CHECK(first.compiled);
  CHECK_FALSE(first.compile_cache_hit);
  // Built by the compile pool; the timed worker only imported it.
  CHECK(first.extensions_imported == 1);
  CHECK(first.extensions_built == 0);
  const evaluation second = run(ev, dir / "task.py", dir / "inline_kernel.py");
  CHECK(second.status == eval_status::ok);
  CHECK(second.compile_cache_hit);
  CHECK(second.extensions_built == 0);
  const evaluation broken = run(ev, dir / "task.py", dir / "not_compiling_inline.py");
  INFO(broken.text());
  CHECK(broken.status == eval_status::compile_error);
  CHECK(broken.reason.find("error") != std::string::npos);
  const evaluation broken_again = run(ev, dir / "task.py", dir / "not_compiling_inline.py");
  CHECK(broken_again.status == eval_status::compile_error);
  CHECK(broken_again.compile_cache_hit);
  CHECK(ev.cache().hits() == 2);
  CHECK(ev.cache().misses() == 2);
}

TEST_CASE("a compile killed with its evaluator leaves no lock behind: the next evaluation's pool builds the kernel") {
  // An evaluator killed with SIGKILL mid-compile: its compile worker dies
  // with it (PR_SET_PDEATHSIG), but torch's build lock (the file `lock` in
  // the build directory) stays, and the compiler it started may still run
  // there. torch waits on that lock for ever: every later compile of the
  // kernel ran to the pool's deadline, and the timing worker built it again.
  std::optional<scratch_dir> cache;
  evaluator_options opt = fresh_cache_options(cache);
  opt.compile.timeout_s = 240;  // the old failure in minutes, not the default 10
  const auto dir = tasks / "cpu" / "scale_relu";
  const auto req = load_request(dir / "task.py", dir / "inline_kernel.py", "cpu", 7);
  REQUIRE(req.ok());
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {  // the evaluator about to be killed: its compile pool alone
    compile_cache c(opt.compile);
    (void)c.prepare(req->candidate_source, "", worker_environment::defaults(),
                    evaluator_options::default_scratch_root(), {});
    ::_exit(0);
  }
  auto lock_left = [&] {
    std::error_code ec;
    for (auto it = std::filesystem::recursive_directory_iterator(cache->path(), ec);
         !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec))
      if (it->path().filename() == "lock") return true;
    return false;
  };
  bool building = false;
  for (int i = 0; i < 1200 && !building; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    building = lock_left();
  }
  ::kill(child, SIGKILL);
  ::waitpid(child, nullptr, 0);
  REQUIRE_MESSAGE(building, "the compile never took torch's build lock");
  REQUIRE(lock_left());  // what the killed builder left
  evaluator ev(opt);
  const evaluation e = run(ev, dir / "task.py", dir / "inline_kernel.py");
  INFO(e.text());
  CHECK(e.status == eval_status::ok);
  CHECK_FALSE(e.compile_cache_hit);
  CHECK(e.extensions_imported == 1);  // the pool built it; the timed worker only imported it
  CHECK(e.extensions_built == 0);
}

TEST_CASE("a prefetched job's syntax check and compile ran ahead: its evaluation takes them, verdicts unchanged") {
  std::optional<scratch_dir> cache;
  evaluator ev = fresh_cache_evaluator(cache);
  const auto dir = tasks / "cpu" / "scale_relu";
  auto inline_req = load_request(dir / "task.py", dir / "inline_kernel.py", "cpu", 7);
  auto broken_req = load_request(dir / "task.py", dir / "not_compiling_inline.py", "cpu", 7);
  auto syntax_req = load_request(tasks / "cpu" / "diag_matmul" / "task.py",
                                 tasks / "cpu" / "diag_matmul" / "not_compiling.py", "cpu", 7);
  REQUIRE((inline_req.ok() && broken_req.ok() && syntax_req.ok()));
  for (auto* r : {&*inline_req, &*broken_req, &*syntax_req}) ev.prefetch(*r);
  ev.prefetch(*inline_req);  // a second prefetch of a held job is one job
  for (auto* r : {&*inline_req, &*broken_req, &*syntax_req}) {
    auto e = ev.evaluate(*r, steady());
    REQUIRE(e.ok());
    INFO(e->text());
    // The CPU stage's time is what the evaluation waited for it, not its own steps.
    CHECK(e->phase_s.count("cpu_stage_wait") == 1);
    CHECK(e->phase_s.count("compile") == 0);
    if (r == &*inline_req) {
      CHECK(e->status == eval_status::ok);
      CHECK(e->compiled);
      CHECK(e->extensions_imported == 1);
      CHECK(e->extensions_built == 0);
    } else {
      CHECK(e->status == eval_status::compile_error);
      CHECK(e->reason.find(r == &*syntax_req ? "candidate does not parse" : "compiling the candidate") !=
            std::string::npos);
    }
  }
  CHECK(ev.cache().misses() == 2);
  // Not prefetched: the steps run in line, as before.
  auto again = ev.evaluate(*inline_req, steady());
  REQUIRE(again.ok());
  CHECK(again->phase_s.count("compile") == 1);
  CHECK(again->compile_cache_hit);
}

TEST_CASE("extensions built on a first forward, or on a later call found in the source, are built ahead by the pool") {
  // inline_extension_in_forward: the pool's one call builds it, into the
  // cache and not the folder it names. inline_extension_on_later_call: it
  // builds on its second call, which the pool's one call does not reach; the
  // source's load_inline call, whose arguments are module data, is built in
  // the pool all the same (worker/ahead_builds.py).
  const auto root = std::filesystem::path(CRUCIBLE_SOURCE_DIR);
  for (const char* candidate : {"inline_extension_in_forward.py", "inline_extension_on_later_call.py"}) {
    std::optional<scratch_dir> cache;
    evaluator ev = fresh_cache_evaluator(cache);
    const evaluation e = run(ev, tasks / "cpu/scale_relu/task.py", root / "tests/hacks/legit" / candidate);
    INFO(candidate << ": " << e.text());
    CHECK(e.status == eval_status::ok);
    CHECK(e.defences_fired.empty());
    CHECK(e.extensions_imported == 1);  // from the cache: the timed worker built nothing
    CHECK(e.extensions_built == 0);
  }
  CHECK_FALSE(std::filesystem::exists("/tmp/cuda_extensions/fused_scale_relu.so"));
}

TEST_CASE("an unknown device is an error, not an evaluation") {
  evaluator ev;
  auto req = load_request(tasks / "cpu/diag_matmul/task.py", tasks / "cpu/diag_matmul/equal.py", "tpu:0", 1);
  REQUIRE(req.ok());
  auto r = ev.evaluate(*req, steady());
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == crucible::errc::invalid_argument);
}

TEST_CASE("the JSON form carries every field a settlement needs") {
  const evaluation e = run_cpu("chain_matmul", "faster");
  const auto j = to_json(e);
  for (const char* key : {"status", "reward", "speedup_raw", "bucket_means", "bucket_variance", "rounds",
                          "correctness_trials", "ref_us", "cand_us", "device", "duration_s", "reason",
                          "defences_fired", "seed"})
    CHECK_MESSAGE(j.contains(key), key);
  CHECK(j["status"] == "ok");
  CHECK(j["bucket_means"].size() == 7);
  CHECK(j["device"] == "cpu");
  CHECK(j["seed"] == 7);
}

TEST_CASE("tolerances apply per output dtype, and strict mode holds half precision to its own bound") {
  const auto dir = std::filesystem::path(CRUCIBLE_SOURCE_DIR) / "tests/data/evaluator/half_scale";
  evaluator ev;
  auto p = classify();
  const evaluation by_default = run(ev, dir / "task.py", dir / "three_percent_high.py", p);
  CHECK(by_default.status == eval_status::incorrect);
  CHECK(by_default.reason.find("atol=0.01 rtol=0.01") != std::string::npos);

  auto other_dtype = p;
  REQUIRE(apply_tolerance(other_dtype, "float32=0.05").ok());
  const evaluation float32_only = run(ev, dir / "task.py", dir / "three_percent_high.py", other_dtype);
  CHECK(float32_only.status == eval_status::incorrect);
  CHECK(float32_only.reason.find("float32 atol=0.05 rtol=0.05") != std::string::npos);

  auto half = p;
  REQUIRE(apply_tolerance(half, "float16=0.05:0.05").ok());
  CHECK(run(ev, dir / "task.py", dir / "three_percent_high.py", half).status == eval_status::ok);

  // Strict: 1e-5 for float32 would fail float16's own rounding; its 1e-3 does not.
  auto strict = p;
  strict.strict = true;
  CHECK(strict.tolerances().fallback.atol == 1e-5);
  CHECK(strict.tolerances().by_dtype.at("float16").rtol == 1e-3);
  CHECK(run(ev, dir / "task.py", dir / "identity.py", strict).status == eval_status::ok);
  CHECK(run(ev, dir / "task.py", dir / "three_percent_high.py", strict).status == eval_status::incorrect);
}

TEST_CASE("a tolerance setting that cannot be read is an error naming it") {
  protocol_options p;
  REQUIRE(apply_tolerance(p, "0.02:0.03").ok());
  CHECK(p.atol == 0.02);
  CHECK(p.rtol == 0.03);
  REQUIRE(apply_tolerance(p, "bfloat16=0.1").ok());
  CHECK(p.tolerances().by_dtype.at("bfloat16").rtol == 0.1);
  for (const char* bad : {"float16=abc", "Float 16=0.1", "=0.1", "float16=-1", "0.1:", "float16=0.1:x"}) {
    CAPTURE(bad);
    auto s = apply_tolerance(p, bad);
    REQUIRE_FALSE(s.ok());
    CHECK(s.error().text().find(bad) != std::string::npos);
  }
}

TEST_CASE("native code in a candidate is contained by Landlock and seccomp alone, without namespaces") {
  // tools/native_escape.py: a candidate whose C++ writes a file outside its
  // scratch directory, connects to a TCP listener, kills and ptrace-attaches
  // a process the tool started, evaluated with `crucible eval
  // --no-namespaces` (a GPU worker's sandbox); the tool checks from outside
  // that none of it happened and that the candidate still ran, correctly.
  const std::string root = CRUCIBLE_SOURCE_DIR, bin = CRUCIBLE_BINARY_DIR;
  const std::string cmd = "/usr/bin/python3 " + root + "/tools/native_escape.py " + bin + "/bin/crucible-eval " + root +
                          "/tests/hacks/tasks/cuda_elementwise.py cpu 2>&1";
  std::string out;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[512];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int rc = ::pclose(p);
  MESSAGE(out);
  CHECK(WIFEXITED(rc));
  CHECK(WEXITSTATUS(rc) == 0);
  CHECK(out.find("landlock-fs") != std::string::npos);
  CHECK(out.find("seccomp") != std::string::npos);
  CHECK(out.find("ESCAPED") == std::string::npos);
  CHECK(out.find("native escape: all contained") != std::string::npos);
}
