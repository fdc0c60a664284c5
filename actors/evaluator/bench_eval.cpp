// crucible-bench-eval: evaluator throughput on this machine's CPU backend.
//
//   crucible-bench-eval [--protocol default] [--repeat 1] [--variants faster,equal,...]
//                       [--tasks configs/tasks/cpu] [--cache-dir DIR]
//
// Evaluates every listed variant of every task in the task set (one
// evaluator, one worker core, sequentially), then the inline-extension
// candidate twice with a fresh compile cache (one miss, one hit), and prints
// a Markdown table: evaluations per hour overall and per status, median
// seconds per evaluation, compile-cache hits and misses.
#include <algorithm>
#include <chrono>
#include <iostream>
#include <map>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "actors/evaluator/evaluate.hpp"
#include "actors/evaluator/scratch.hpp"
#include "actors/evaluator/statistics.hpp"

using namespace crucible::evaluator;

int main(int argc, char** argv) {
  CLI::App app{"crucible-bench-eval: evaluator throughput on CPU"};
  std::string protocol_name = "default";
  std::string tasks_dir = std::string(CRUCIBLE_SOURCE_DIR) + "/configs/tasks/cpu";
  std::string cache_dir;
  int repeat = 1;
  std::vector<std::string> variants{"faster", "equal", "slower", "incorrect", "crashing", "hanging", "not_compiling"};
  app.add_option("--protocol", protocol_name)->capture_default_str();
  app.add_option("--repeat", repeat)->capture_default_str();
  app.add_option("--variants", variants)->delimiter(',');
  app.add_option("--tasks", tasks_dir)->capture_default_str();
  app.add_option("--cache-dir", cache_dir, "Compile cache root (default: a fresh temporary one)");
  CLI11_PARSE(app, argc, argv);

  auto protocol = protocol_by_name(protocol_name);
  if (!protocol) {
    std::cerr << protocol.error().text() << "\n";
    return 2;
  }
  std::optional<scratch_dir> fresh_cache;
  evaluator_options opt;
  if (cache_dir.empty()) {
    auto d = scratch_dir::create(std::filesystem::temp_directory_path() / "crucible-bench-eval", "cache");
    if (!d) return 2;
    fresh_cache.emplace(std::move(d.value()));
    opt.compile.root = fresh_cache->path();
  } else {
    opt.compile.root = cache_dir;
  }
  evaluator ev(opt);

  std::vector<std::pair<std::filesystem::path, std::filesystem::path>> jobs;
  std::vector<std::filesystem::path> task_dirs;
  for (auto& d : std::filesystem::directory_iterator(tasks_dir))
    if (std::filesystem::exists(d.path() / "task.py")) task_dirs.push_back(d.path());
  std::sort(task_dirs.begin(), task_dirs.end());
  for (int r = 0; r < repeat; ++r)
    for (auto& d : task_dirs)
      for (auto& v : variants)
        if (std::filesystem::exists(d / (v + ".py"))) jobs.emplace_back(d / "task.py", d / (v + ".py"));
  for (auto& d : task_dirs)
    if (std::filesystem::exists(d / "inline_kernel.py"))
      for (int i = 0; i < 2; ++i) jobs.emplace_back(d / "task.py", d / "inline_kernel.py");

  std::map<std::string, std::vector<double>> seconds_by_status;
  std::vector<double> all;
  std::uint64_t rounds = 0;
  const auto t0 = std::chrono::steady_clock::now();
  std::uint64_t seed = 1;
  for (auto& [task, cand] : jobs) {
    auto req = load_request(task, cand, "cpu", seed++);
    if (!req) {
      std::cerr << req.error().text() << "\n";
      return 2;
    }
    auto e = ev.evaluate(*req, *protocol);
    if (!e) {
      std::cerr << e.error().text() << "\n";
      return 2;
    }
    std::cerr << fmt::format("{:<40} {}\n", req->task_id + " " + cand.stem().string(), e->text().substr(0, 140));
    seconds_by_status[std::string(to_string(e->status))].push_back(e->duration_s);
    all.push_back(e->duration_s);
    rounds += e->rounds;
  }
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  std::cout << fmt::format("protocol `{}`, {} evaluations in {:.1f} s, one worker core, sequential\n\n",
                           protocol->name, all.size(), wall);
  std::cout << "| status | evaluations | median s | mean s |\n|---|---|---|---|\n";
  for (auto& [status, s] : seconds_by_status) {
    double sum = 0;
    for (double x : s) sum += x;
    std::cout << fmt::format("| {} | {} | {:.2f} | {:.2f} |\n", status, s.size(), median(s), sum / s.size());
  }
  double sum = 0;
  for (double x : all) sum += x;
  std::cout << fmt::format("| **all** | {} | {:.2f} | {:.2f} |\n\n", all.size(), median(all), sum / all.size());
  std::cout << fmt::format("- evaluations per hour: **{:.0f}** (the paper's 1800 s window: 2)\n",
                           3600.0 * static_cast<double>(all.size()) / wall);
  std::cout << fmt::format("- timed rounds: {} ({:.0f} per second of evaluation)\n", rounds,
                           static_cast<double>(rounds) / sum);
  std::cout << fmt::format("- compile cache: {} hits, {} misses\n", ev.cache().hits(), ev.cache().misses());
  return 0;
}
