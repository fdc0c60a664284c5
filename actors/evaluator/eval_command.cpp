#include "actors/evaluator/eval_command.hpp"

#include <iostream>
#include <memory>
#include <random>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/evaluator/evaluate.hpp"

namespace crucible::evaluator {
namespace {

struct eval_args {
  std::string task, candidate, device = "cpu", protocol = "default", cache_dir, scratch_root, statistic;
  double window_s = 0;  // 0: the protocol's
  std::uint64_t seed = 0;
  bool seed_given = false;
  bool json = false;
  bool keep_scratch = false;
  bool no_namespaces = false;
  bool strict = false;
  std::vector<std::string> tolerances;
  std::vector<int> cores;
};

int run_eval(const eval_args& a) {
  auto protocol = protocol_by_name(a.protocol);
  if (!protocol) {
    std::cerr << "crucible eval: " << protocol.error().text() << "\n";
    return 2;
  }
  if (!a.statistic.empty()) {
    auto s = bucket_statistic_by_name(a.statistic);
    if (!s) {
      std::cerr << "crucible eval: " << s.error().text() << "\n";
      return 2;
    }
    protocol->statistic = *s;
  }
  if (a.window_s > 0) protocol->window_s = a.window_s;
  protocol->strict = a.strict;
  for (const auto& t : a.tolerances)
    if (auto s = apply_tolerance(*protocol, t); !s) {
      std::cerr << "crucible eval: " << s.error().text() << "\n";
      return 2;
    }
  std::uint64_t seed = a.seed;
  if (!a.seed_given) seed = (std::uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  auto request = load_request(a.task, a.candidate, a.device, seed);
  if (!request) {
    std::cerr << "crucible eval: " << request.error().text() << "\n";
    return 2;
  }
  evaluator_options options;
  if (!a.cores.empty()) options.limits.cores = a.cores;
  if (!a.cache_dir.empty()) options.compile.root = a.cache_dir;
  if (!a.scratch_root.empty()) options.scratch_root = a.scratch_root;
  options.keep_scratch = a.keep_scratch;
  if (a.no_namespaces) {
    options.limits.isolate_network = false;
    options.limits.read_only_filesystem = false;
  }
  evaluator ev(options);
  auto result = ev.evaluate(*request, *protocol);
  if (!result) {
    std::cerr << "crucible eval: " << result.error().text() << "\n";
    return 2;
  }
  if (a.json) std::cout << to_json(*result).dump() << std::endl;
  else std::cout << result->text() << std::endl;
  return 0;
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto args = std::make_shared<eval_args>();
  CLI::App* cmd = app.add_subcommand("eval", "Evaluate one candidate against its task (sandboxed, paired timing)");
  cmd->add_option("--task", args->task, "Task file (KernelBench format: Model, get_inputs, get_init_inputs)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--candidate", args->candidate, "Candidate file (defines ModelNew)")
      ->required()->check(CLI::ExistingFile);
  cmd->add_option("--device", args->device, "cpu or cuda:N")->capture_default_str();
  cmd->add_option("--protocol", args->protocol, "Measurement protocol: default, paper, quick, smoke")->capture_default_str();
  cmd->add_option("--seed", args->seed, "Seed of every input and round order (default: random, reported)")
      ->each([args](const std::string&) { args->seed_given = true; });
  cmd->add_flag("--json", args->json, "Print one JSON object");
  cmd->add_flag("--strict", args->strict,
                "Strict correctness: atol = rtol = 1e-5 (float16 1e-3, bfloat16 1e-2) instead of 1e-2");
  cmd->add_option("--tolerance", args->tolerances,
                  "ATOL[:RTOL] for every output, or DTYPE=ATOL[:RTOL] for outputs of that torch dtype "
                  "(float16, bfloat16, ...); repeatable, applied after --strict");
  cmd->add_option("--bucket-statistic", args->statistic,
                  "Override the protocol's bucket statistic: geometric, arithmetic, trimmed, median");
  cmd->add_option("--window-s", args->window_s,
                  "Override the protocol's measurement window, seconds (what a measurement that never meets "
                  "the early stop costs)");
  cmd->add_option("--cores", args->cores, "CPU cores for the worker (default: the last core)")->delimiter(',');
  cmd->add_option("--cache-dir", args->cache_dir, "Compile cache root");
  cmd->add_option("--scratch-root", args->scratch_root, "Where scratch directories go");
  cmd->add_flag("--keep-scratch", args->keep_scratch, "Keep the worker's scratch directory and log");
  cmd->add_flag("--no-namespaces", args->no_namespaces,
                "Start the worker without user, network and mount namespaces, as on a GPU node: Landlock and "
                "seccomp alone contain its native code");
  cmd->callback([args] {
    const int code = run_eval(*args);
    if (code != 0) throw CLI::RuntimeError(code);
  });
}

}  // namespace crucible::evaluator
