// `crucible kernels export --run DIR [--out FILE] [--tasks-dir DIR]`: the
// best settled kernel of each task of a loop run (kernels_found.hpp), read
// from DIR/settlements.jsonl, as JSON lines in CUDA-L1's released format
// plus crucible's own fields. ref_code is the task file under --tasks-dir,
// or under the tasks_dir that DIR/summary.json records; null when neither
// holds it. Exit 2 with a message naming the file (and line) on bad input.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "actors/rollout/task_schedule.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/cli/kernels_found.hpp"
#include "runtime/cli/process.hpp"

namespace crucible::cli {

namespace {
namespace fs = std::filesystem;

struct export_args {
  std::string run_dir, out, tasks_dir;
};

// --tasks-dir, else what the run recorded; "" when neither says.
std::string tasks_root(const export_args& a) {
  if (!a.tasks_dir.empty()) return a.tasks_dir;
  std::ifstream in(fs::path(a.run_dir) / "summary.json");
  auto summary = nlohmann::json::parse(in, nullptr, false);
  if (summary.is_object() && summary.contains("tasks_dir") && summary["tasks_dir"].is_string())
    return summary["tasks_dir"].get<std::string>();
  return "";
}

std::optional<std::string> reference_code(const std::string& root, const std::string& task) {
  if (root.empty()) return std::nullopt;
  auto entries = rollout::load_tasks(root, {task});
  if (!entries || entries->empty()) return std::nullopt;
  return entries->front().code;
}

int export_kernels(const export_args& a) {
  std::error_code ec;
  if (!fs::is_directory(a.run_dir, ec)) return fail("--run " + a.run_dir + ": no such run folder");
  if (!a.tasks_dir.empty() && !fs::is_directory(a.tasks_dir, ec))
    return fail("--tasks-dir " + a.tasks_dir + ": no such folder");
  auto rows = read_settlements_file((fs::path(a.run_dir) / "settlements.jsonl").string());
  if (!rows) return fail(rows.error());
  const std::string root = tasks_root(a);
  std::ofstream file;
  if (!a.out.empty()) {
    file.open(a.out, std::ios::trunc);
    if (!file) return fail("--out " + a.out + ": cannot be written");
  }
  std::ostream& out = a.out.empty() ? std::cout : file;
  std::size_t kernels = 0, without_reference = 0;
  for (const auto& best : best_kernels(*rows)) {
    auto ref = reference_code(root, best.task);
    without_reference += !ref.has_value();
    out << kernel_line(best, ref).dump() << "\n";
    ++kernels;
  }
  out.flush();
  if (!out) return fail(a.out.empty() ? std::string("stdout: write failed") : "--out " + a.out + ": write failed");
  std::string note = fmt::format("{} kernel(s) from {} settled candidate(s)", kernels, rows->size());
  if (!a.out.empty()) note += " to " + a.out;
  if (without_reference)
    note += fmt::format("; {} without ref_code ({})", without_reference,
                        root.empty() ? "no tasks folder known" : "not under " + root);
  std::fprintf(stderr, "%s\n", note.c_str());
  return 0;
}

}  // namespace

command add_kernels_command(CLI::App& app) {
  auto* kernels = app.add_subcommand("kernels", "The kernels a run found");
  kernels->require_subcommand(1);
  auto a = std::make_shared<export_args>();
  auto* cmd = kernels->add_subcommand(
      "export",
      "Write each task's best settled kernel (verified ones preferred) as JSON lines in CUDA-L1's released format "
      "(level_id, task_id, ref_code, custom_code, score_default) plus task, candidate_id, policy_version, found_unix, "
      "found, verified");
  cmd->add_option("--run", a->run_dir, "run folder of `crucible run` (reads its settlements.jsonl)")->required();
  cmd->add_option("--out", a->out, "output file (default: stdout)");
  cmd->add_option("--tasks-dir", a->tasks_dir,
                  "root of the task files for ref_code (default: the tasks_dir the run's summary.json records)");
  return {cmd, [a] { return export_kernels(*a); }};
}

}  // namespace crucible::cli
