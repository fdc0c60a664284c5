// `crucible run CONFIG [--run-dir DIR] [--resume DIR]`: runs the job [run]
// names with every role in this process (the embedded default: one
// machine, the real bus over ipc in the run folder, RocksDB in the run
// folder). The jobs are in run_variants.cpp and run_loop.cpp.
#include <ctime>
#include <filesystem>

#include <spdlog/spdlog.h>

#include "runtime/cli/commands.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/cli/run_jobs.hpp"
#include "runtime/config/runtime_options.hpp"
#include "runtime/log/log.hpp"

namespace crucible::cli {

namespace {
namespace fs = std::filesystem;

struct run_args {
  std::string config, run_dir, resume, metrics, dashboard;
};

int run_main(const run_args& a) {
  auto file = load_config(a.config);
  if (!file) return 2;
  logging::log_options log;
  run_options run;
  if (auto s = config::read(file->get("log"), log); !s) return fail(s.error());
  if (auto s = read(file->get("run"), run); !s) return fail(s.error());
  if (!a.resume.empty() && !a.run_dir.empty()) return fail("give --run-dir or --resume, not both");
  if (!a.resume.empty() && !fs::is_directory(a.resume))
    return fail("--resume " + a.resume + ": no such run folder");
  if (!a.resume.empty() && run.job != "loop") return fail("--resume: only job \"loop\" resumes ([run] job is \"" + run.job + "\")");
  std::string dir = !a.resume.empty() ? a.resume : !a.run_dir.empty() ? a.run_dir : "runs/" + std::to_string(std::time(nullptr));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return fail("cannot create run folder '" + dir + "': " + ec.message());
  dir = fs::canonical(dir).string();
  log.file = dir + "/run.log";
  if (auto s = logging::init("run", logging::host_name(), log); !s) return fail(s.error());
  // One endpoint for every role of the run.
  auto metrics = open_metrics(*file, a.metrics);
  if (!metrics) return fail(metrics.error());
  auto registry = *metrics ? (*metrics)->registry() : nullptr;
  // The dashboard outlives the run's actor system: the roles write into it.
  auto dashboard = open_dashboard(*file, a.dashboard);
  if (!dashboard) return fail(dashboard.error());
  if (*dashboard) run.board = (*dashboard)->board();
  if (run.job == "variants") return run_variants(*file, run, dir, registry);
#ifdef CRUCIBLE_HAVE_LOOP
  return run_loop(*file, run, dir, !a.resume.empty(), registry);
#else
  return fail("[run] job \"loop\" needs the learner and the rollout, which this build left out (LibTorch off)");
#endif
}

}  // namespace

command add_run_command(CLI::App& app) {
  auto a = std::make_shared<run_args>();
  auto* cmd = app.add_subcommand("run", "Run the job a config describes, every role in this process");
  cmd->add_option("config", a->config, "TOML config, e.g. configs/quickstart.toml")->required()->check(CLI::ExistingFile);
  cmd->add_option("--run-dir", a->run_dir, "run folder (default runs/TIMESTAMP)");
  cmd->add_option("--resume", a->resume, "continue the run in this folder after a crash or a stop");
  add_metrics_option(*cmd, a->metrics);
  add_dashboard_option(*cmd, a->dashboard);
  return {cmd, [a] { return run_main(*a); }};
}

}  // namespace crucible::cli
