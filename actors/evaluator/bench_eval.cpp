// crucible-bench-eval: evaluator throughput (evaluations per hour) on the CPU
// backend or on one GPU, with compile-cache hits counted.
//
//   crucible-bench-eval [--protocol default] [--repeat 1] [--device cpu|cuda:N]
//                       [--variants faster,equal,...] [--tasks configs/tasks/cpu]
//                       [--jobs FILE] [--json-out FILE] [--cache-dir DIR]
//                       [--prefetch 2] [--compare-cold]
//
// Without --jobs: every listed variant of every task in the task set (one
// evaluator, one worker core, sequentially), then the inline-extension
// candidate twice with a fresh compile cache (one miss, one hit).
// With --jobs FILE: the evaluations that FILE lists, one `NAME TASK CANDIDATE`
// a line ('#' starts a comment; paths relative to the file's folder), e.g.
// tools/gpu/kernelbench_eval.sh's KernelBench candidates on an H200.
// --repeat N runs the whole list N times in turn (repeats spread in time).
// Prints a Markdown table: evaluations per hour overall and per status,
// median seconds per evaluation, compile-cache hits and misses; --json-out
// writes each evaluation's JSON (crucible eval --json) with "job" and
// "repeat" added, one a line.
// --prefetch N (2): as the evaluator role does, the next N jobs' syntax
// check and compile run ahead on other cores (cpu_stage.hpp), the first of
// them whose build is done is measured next (first_ready), and the warm
// spares start with the evaluator, before the clock.
// --compare-cold runs the whole list twice in one call, first with each
// worker started when it is needed and every CPU step in line (the cold
// start, as before issue 18), then with the warm spares and the prefetch
// (worker_pool.hpp), each pass with a compile cache of its own, and
// prints both tables and `warm speedup over cold start: X`, X being the
// cold pass's median seconds per evaluation over the warm pass's.
#include <algorithm>
#include <chrono>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <numeric>
#include <sstream>
#include <thread>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/evaluator/evaluate.hpp"
#include "actors/evaluator/scratch.hpp"
#include "actors/evaluator/statistics.hpp"

using namespace crucible::evaluator;
namespace fs = std::filesystem;

namespace {

struct bench_job {
  std::string name;
  fs::path task, candidate;
};

// The task set's variants (and its inline candidate twice, cold then cached).
std::vector<bench_job> task_set_jobs(const fs::path& tasks_dir, const std::vector<std::string>& variants) {
  std::vector<fs::path> task_dirs;
  for (auto& d : fs::directory_iterator(tasks_dir))
    if (fs::exists(d.path() / "task.py")) task_dirs.push_back(d.path());
  std::sort(task_dirs.begin(), task_dirs.end());
  std::vector<bench_job> jobs;
  for (auto& d : task_dirs)
    for (auto& v : variants)
      if (fs::exists(d / (v + ".py"))) jobs.push_back({d.filename().string() + "/" + v, d / "task.py", d / (v + ".py")});
  return jobs;
}

// `NAME TASK CANDIDATE` lines. Errors: not_found (file), invalid_argument
// (a line without three fields, or a file it names that does not exist).
crucible::result<std::vector<bench_job>> read_jobs(const fs::path& file) {
  std::ifstream in(file);
  if (!in) return crucible::make_error(crucible::errc::not_found, "cannot read jobs file " + file.string());
  std::vector<bench_job> jobs;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = line.substr(0, line.find('#'));
    std::istringstream fields(line);
    bench_job j;
    std::string task, cand, extra;
    if (!(fields >> j.name)) continue;
    if (!(fields >> task >> cand) || (fields >> extra))
      return crucible::make_error(crucible::errc::invalid_argument,
                                  fmt::format("{}:{}: want `NAME TASK CANDIDATE`", file.string(), n));
    j.task = fs::absolute(file).parent_path() / task;
    j.candidate = fs::absolute(file).parent_path() / cand;
    for (auto& p : {j.task, j.candidate})
      if (!fs::exists(p))
        return crucible::make_error(crucible::errc::invalid_argument,
                                    fmt::format("{}:{}: no such file {}", file.string(), n, p.string()));
    jobs.push_back(std::move(j));
  }
  return jobs;
}

struct pass_result {
  std::map<std::string, std::vector<double>> seconds_by_status;
  std::vector<double> all;
  std::uint64_t rounds = 0;
  double wall = 0;
};

// Evaluates every job in turn with ev; each evaluation's JSON (with "job",
// "repeat" and, when comparing, "pass") to json_lines when it is open.
// Errors: an evaluation that could not run (printed).
std::optional<pass_result> run_pass(evaluator& ev, const std::vector<std::pair<int, bench_job>>& jobs,
                                    const protocol_options& protocol, const std::string& device,
                                    std::size_t prefetch, std::ofstream& json_lines, const std::string& pass) {
  pass_result out;
  std::vector<eval_request> requests;
  std::uint64_t seed = 1;
  for (auto& [rep, job] : jobs) {
    auto req = load_request(job.task, job.candidate, device, seed++);
    if (!req) {
      std::cerr << req.error().text() << "\n";
      return std::nullopt;
    }
    requests.push_back(std::move(*req));
  }
  // As the evaluator role does: spares started when the evaluator starts,
  // and the next jobs' CPU stage run ahead while one is measured.
  if (auto s = ev.prime(device); !s) {
    std::cerr << s.error().text() << "\n";
    return std::nullopt;
  }
  const auto t0 = std::chrono::steady_clock::now();
  // Jobs not yet measured, in order; of the first 1 + prefetch of them the
  // first whose CPU stage is done goes next (first_ready), as in the
  // evaluator actor, so that the device does not wait on one kernel's build
  // while another is ready.
  std::deque<std::size_t> pending(jobs.size());
  std::iota(pending.begin(), pending.end(), std::size_t{0});
  while (!pending.empty()) {
    const std::size_t window = prefetch ? std::min(pending.size(), 1 + prefetch) : 1;
    for (std::size_t k = 0; prefetch && k < window; ++k) ev.prefetch(requests[pending[k]]);
    std::optional<std::size_t> pick;
    while (!(pick = first_ready(window, [&](std::size_t k) { return ev.ready(requests[pending[k]]); })))
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const std::size_t i = pending[*pick];
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(*pick));
    const auto& [rep, job] = jobs[i];
    auto e = ev.evaluate(requests[i], protocol);
    if (!e) {
      std::cerr << e.error().text() << "\n";
      return std::nullopt;
    }
    std::cerr << fmt::format("{:<44} {}\n", (pass.empty() ? "" : pass + " ") + job.name + " #" + std::to_string(rep + 1),
                             e->text().substr(0, 150));
    if (json_lines.is_open()) {
      auto j = to_json(*e);
      j["job"] = job.name;
      j["repeat"] = rep + 1;
      if (!pass.empty()) j["pass"] = pass;
      j["finished_unix"] = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
      json_lines << j.dump() << "\n" << std::flush;
    }
    out.seconds_by_status[std::string(to_string(e->status))].push_back(e->duration_s);
    out.all.push_back(e->duration_s);
    out.rounds += e->rounds;
  }
  out.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

void print_pass(const pass_result& r, const protocol_options& protocol, const std::string& device, evaluator& ev) {
  std::cout << fmt::format("protocol `{}` on {}, {} evaluations in {:.1f} s, one worker core, sequential, {}\n\n",
                           protocol.name, device, r.all.size(), r.wall,
                           (device.rfind("cuda", 0) == 0 ? ev.options().warm_spares_gpu : ev.options().warm_spares)
                               ? "warm spare workers"
                               : "cold start");
  std::cout << "| status | evaluations | median s | mean s |\n|---|---|---|---|\n";
  for (auto& [status, s] : r.seconds_by_status) {
    double sum = 0;
    for (double x : s) sum += x;
    std::cout << fmt::format("| {} | {} | {:.2f} | {:.2f} |\n", status, s.size(), median(s), sum / s.size());
  }
  double sum = 0;
  for (double x : r.all) sum += x;
  std::cout << fmt::format("| **all** | {} | {:.2f} | {:.2f} |\n\n", r.all.size(), median(r.all), sum / r.all.size());
  std::cout << fmt::format("- evaluations per hour: **{:.0f}** (the paper's 1800 s window: 2)\n",
                           3600.0 * static_cast<double>(r.all.size()) / r.wall);
  // The first evaluation of a warm pass also waits for the pool's start
  // (prime), which a long-running evaluator pays once; the rate after it is
  // the steady one.
  if (r.all.size() > 1 && r.wall > r.all.front())
    std::cout << fmt::format("- after the first evaluation: **{:.0f}** per hour ({} in {:.1f} s)\n",
                             3600.0 * static_cast<double>(r.all.size() - 1) / (r.wall - r.all.front()),
                             r.all.size() - 1, r.wall - r.all.front());
  std::cout << fmt::format("- timed rounds: {} ({:.0f} per second of evaluation)\n", r.rounds,
                           static_cast<double>(r.rounds) / sum);
  std::cout << fmt::format("- compile cache: {} hits, {} misses\n", ev.cache().hits(), ev.cache().misses());
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"crucible-bench-eval: evaluator throughput"};
  std::string protocol_name = "default";
  std::string tasks_dir = std::string(CRUCIBLE_SOURCE_DIR) + "/configs/tasks/cpu";
  std::string cache_dir, jobs_file, json_out, device = "cpu";
  int repeat = 1;
  std::size_t prefetch = 2;
  bool compare_cold = false;
  evaluator_options opt;
  std::vector<std::string> variants{"faster", "equal", "slower", "incorrect", "crashing", "hanging", "not_compiling"};
  app.add_option("--protocol", protocol_name)->capture_default_str();
  app.add_option("--repeat", repeat)->capture_default_str();
  app.add_option("--device", device)->capture_default_str();
  app.add_option("--variants", variants)->delimiter(',');
  app.add_option("--tasks", tasks_dir)->capture_default_str();
  app.add_option("--jobs", jobs_file, "Evaluate these `NAME TASK CANDIDATE` lines instead of the task set");
  app.add_option("--json-out", json_out, "Write each evaluation's JSON here, one a line");
  app.add_option("--cache-dir", cache_dir, "Compile cache root (default: a fresh temporary one)");
  app.add_option("--prefetch", prefetch, "Jobs whose syntax check and compile run ahead of the one measured")
      ->capture_default_str();
  app.add_flag("--compare-cold", compare_cold,
               "Run the jobs with cold-started workers, then with warm spares, and print the speedup");
  app.add_option("--spares", opt.warm_spares, "Warm spare workers kept for a CPU device (0: the cold start)")
      ->capture_default_str();
  app.add_option("--gpu-spares", opt.warm_spares_gpu, "Warm spare workers kept for a GPU (0: the cold start)")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  auto protocol = protocol_by_name(protocol_name);
  if (!protocol) {
    std::cerr << protocol.error().text() << "\n";
    return 2;
  }
  std::optional<scratch_dir> fresh_cache;
  if (cache_dir.empty()) {
    auto d = scratch_dir::create(fs::temp_directory_path() / "crucible-bench-eval", "cache");
    if (!d) return 2;
    fresh_cache.emplace(std::move(d.value()));
    opt.compile.root = fresh_cache->path();
  } else {
    opt.compile.root = cache_dir;
  }

  std::vector<bench_job> list;
  if (jobs_file.empty()) {
    list = task_set_jobs(tasks_dir, variants);
  } else {
    auto read = read_jobs(jobs_file);
    if (!read) {
      std::cerr << read.error().text() << "\n";
      return 2;
    }
    list = std::move(read.value());
  }
  std::vector<std::pair<int, bench_job>> jobs;
  for (int r = 0; r < repeat; ++r)
    for (auto& j : list) jobs.emplace_back(r, j);
  if (jobs_file.empty())
    for (auto& j : task_set_jobs(tasks_dir, {"inline_kernel"}))
      for (int i = 0; i < 2; ++i) jobs.emplace_back(i, j);

  std::ofstream json_lines;
  if (!json_out.empty()) json_lines.open(json_out);
  if (!compare_cold) {
    evaluator ev(opt);
    auto r = run_pass(ev, jobs, *protocol, device, prefetch, json_lines, "");
    if (!r) return 2;
    print_pass(*r, *protocol, device, ev);
    return 0;
  }
  std::map<bool, double> medians;
  for (bool warm : {false, true}) {
    evaluator_options pass = opt;
    if (!warm) pass.warm_spares = pass.warm_spares_gpu = 0;
    pass.compile.root = opt.compile.root / (warm ? "warm" : "cold");
    evaluator ev(pass);
    auto r = run_pass(ev, jobs, *protocol, device, warm ? prefetch : 0, json_lines, warm ? "warm" : "cold");
    if (!r) return 2;
    std::cout << "### " << (warm ? "warm workers" : "cold start") << "\n\n";
    print_pass(*r, *protocol, device, ev);
    medians[warm] = median(r->all);
    std::cout << "\n";
  }
  std::cout << fmt::format("warm speedup over cold start: {:.2f} (median s per evaluation {:.2f} cold, {:.2f} warm)\n",
                           medians[false] / std::max(1e-9, medians[true]), medians[false], medians[true]);
  return 0;
}
