#include "actors/exemplar/exemplars_command.hpp"

#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "actors/exemplar/exemplar_import.hpp"
#include "actors/exemplar/exemplar_store.hpp"
#include "storage/rocksdb_store.hpp"

namespace crucible::exemplar {
namespace {

using json = nlohmann::json;

struct args {
  std::string db;
  std::string task;
  std::string code_file;
  std::string id;
  std::string import_file;
  std::vector<std::string> settled_files;  // import: the evaluator's results CUDA-L1 rows take their rewards from
  std::string tasks_dir;                   // import: KernelBench files CUDA-L1 rows' tasks are named after
  std::string scale = "linear";
  std::string selector = "bucket";
  double bucket_width = exemplar_options{}.bucket_width;
  double score = 0;
  double temperature = 1.0;
  std::size_t n = 2;
  std::size_t draws = 1;
  std::uint64_t seed = 1;
  bool as_json = false;
};

// A failed subcommand: the message goes to the error stream, then
// CLI::RuntimeError carries the exit code (CLI11 prints nothing for it).
struct command_failure {
  std::string message;
};
[[noreturn]] void fail(const std::string& message) { throw command_failure{"crucible exemplars: " + message}; }

template <class F>
std::function<void()> guarded(std::ostream* err, F body) {
  return [err, body] {
    try {
      body();
    } catch (const command_failure& f) {
      *err << f.message << "\n" << std::flush;
      throw CLI::RuntimeError(f.message, 1);
    }
  };
}

template <class T>
T must(result<T> r) {
  if (!r.ok()) fail(r.error().message);
  return std::move(r).value();
}

// create: whether a missing database is created (add, import) or an error
// (sample, stats: a typo in --db must not look like an empty store).
std::unique_ptr<exemplar_store> open_store(const args& a, bool create) {
  exemplar_options o;
  o.scale = must(parse_bucket_scale(a.scale));
  o.selector = must(parse_selector_kind(a.selector));
  o.bucket_width = a.bucket_width;
  if (auto s = validate(o); !s.ok()) fail(s.error().message);
  storage::rocksdb_options ro;
  ro.create_if_missing = create;
  if (!create && !std::filesystem::is_directory(a.db)) fail(a.db + ": no exemplar database there");
  std::shared_ptr<storage::kv_store> kv = must(storage::open_rocksdb(a.db, ro));
  return must(exemplar_store::open(std::move(kv), o));
}

json bucket_json(const bucket_summary& b) {
  return {{"bucket", b.bucket}, {"low", b.range.low}, {"high", b.range.high}, {"count", b.count}, {"mean", b.mean()}};
}

void run_add(const args& a, std::ostream& out) {
  std::ifstream in(a.code_file, std::ios::binary);
  if (!in) fail(a.code_file + ": cannot open the code file");
  std::stringstream code;
  code << in.rdbuf();
  if (code.str().empty()) fail(a.code_file + ": the code file is empty");
  auto store = open_store(a, true);
  std::string id = a.id.empty() ? derived_exemplar_id(a.task, code.str()) : a.id;
  auto outcome = must(store->insert({a.task, id, code.str(), a.score}));
  auto bucket = must(store->buckets().bucket_of(a.score));
  if (a.as_json) {
    out << json{{"task", a.task}, {"id", id}, {"bucket", bucket}, {"outcome", to_string(outcome)}}.dump() << "\n";
  } else {
    out << fmt::format("{} {} of task {} (score {}, bucket {})\n", to_string(outcome), id, a.task, a.score, bucket);
  }
}

void run_sample(const args& a, std::ostream& out) {
  if (a.draws < 1) fail("--draws must be at least 1");
  if (!(a.temperature > 0)) fail("--temperature must be positive");
  auto store = open_store(a, false);
  auto stats = must(store->stats(a.task));
  if (stats.empty()) fail(fmt::format("task {} has no exemplars in {}", a.task, a.db));
  std::map<std::int32_t, std::uint64_t> bucket_draws;
  std::map<std::vector<std::int32_t>, std::uint64_t> tuple_draws;
  std::vector<exemplar> first;
  rng gen(a.seed);
  for (std::size_t d = 0; d < a.draws; ++d) {
    auto picked = must(store->sample(a.task, a.n, a.temperature, gen));
    std::vector<std::int32_t> tuple;
    for (const auto& e : picked) {
      ++bucket_draws[e.bucket];
      tuple.push_back(e.bucket);
    }
    ++tuple_draws[tuple];
    if (d == 0) first = std::move(picked);
  }
  std::vector<double> means;
  for (const auto& b : stats) means.push_back(b.mean());
  std::vector<double> p = equation1(means, a.temperature);

  if (!a.as_json) {
    out << fmt::format("task {}: {} draws of {} with temperature {} (seed {}, selector {})\n", a.task, a.draws,
                       a.n, a.temperature, a.seed, a.selector);
    out << "bucket        range         count    mean   eq1(first)   drawn\n";
    for (std::size_t i = 0; i < stats.size(); ++i) {
      const auto& b = stats[i];
      out << fmt::format("{:>6}  [{:.3f}, {:.3f})  {:>6}  {:>7.4f}  {:>10.4f}  {:>6}\n", b.bucket, b.range.low,
                         b.range.high, b.count, b.mean(), p[i], bucket_draws[b.bucket]);
    }
    out << "drawn tuples (bucket numbers, in draw order):\n";
    for (const auto& [t, k] : tuple_draws) out << fmt::format("  {:>12}  {}\n", fmt::join(t, ","), k);
    return;
  }
  json buckets = json::array();
  for (std::size_t i = 0; i < stats.size(); ++i) {
    json b = bucket_json(stats[i]);
    b["probability_first"] = p[i];
    b["drawn"] = bucket_draws[stats[i].bucket];
    b["frequency"] = static_cast<double>(bucket_draws[stats[i].bucket]) / static_cast<double>(a.draws);
    buckets.push_back(b);
  }
  json pairs = json::array();
  for (const auto& [t, k] : tuple_draws) pairs.push_back({{"buckets", t}, {"drawn", k}});
  json sample = json::array();
  for (const auto& e : first)
    sample.push_back({{"id", e.id}, {"score", e.score}, {"bucket", e.bucket}, {"bucket_mean", e.bucket_mean}, {"code", e.code}});
  out << json{{"task", a.task},        {"n", a.n},          {"temperature", a.temperature},
              {"draws", a.draws},      {"seed", a.seed},    {"selector", a.selector},
              {"buckets", buckets},    {"pairs", pairs},    {"first_draw", sample}}
             .dump(2)
      << "\n";
}

void run_stats(const args& a, std::ostream& out) {
  auto store = open_store(a, false);
  std::vector<std::string> tasks = a.task.empty() ? must(store->tasks()) : std::vector<std::string>{a.task};
  json all = json::array();
  for (const auto& t : tasks) {
    auto stats = must(store->stats(t));
    std::uint64_t total = 0;
    json buckets = json::array();
    for (const auto& b : stats) {
      total += b.count;
      buckets.push_back(bucket_json(b));
    }
    if (a.as_json) {
      all.push_back({{"task", t}, {"exemplars", total}, {"buckets", buckets}});
      continue;
    }
    out << fmt::format("task {}: {} exemplars in {} buckets\n", t, total, stats.size());
    for (const auto& b : stats)
      out << fmt::format("  bucket {:>6} [{:.3f}, {:.3f})  count {:>7}  mean {:.4f}\n", b.bucket, b.range.low,
                         b.range.high, b.count, b.mean());
  }
  if (a.as_json) out << json{{"db", a.db}, {"bucketing", store->buckets().describe()}, {"tasks", all}}.dump(2) << "\n";
}

void run_import(const args& a, std::ostream& out) {
  if (!a.tasks_dir.empty() && a.settled_files.empty()) fail("--tasks-dir names CUDA-L1 rows' tasks: give --settled too");
  std::optional<cuda_l1_import> cuda_l1;
  if (!a.settled_files.empty()) cuda_l1 = cuda_l1_import{must(read_settled_results(a.settled_files)), a.tasks_dir};
  auto batch = must(read_exemplar_files({a.import_file}, cuda_l1 ? &*cuda_l1 : nullptr));
  auto store = open_store(a, true);  // after the file is checked: a bad one creates no database
  auto s = must(insert_exemplars(*store, batch));
  if (a.as_json) {
    const auto& l = s.left_out;
    out << json{{"file", a.import_file},
                {"rows", s.rows},
                {"inserted", s.inserted},
                {"duplicates", s.duplicates},
                {"no_code", l.no_code},
                {"not_measured", l.not_measured},
                {"not_ok", l.not_ok},
                {"no_task_file", l.no_task_file},
                {"reference_differs", l.reference_differs}}
               .dump()
        << "\n";
  } else {
    out << a.import_file << ": " << to_string(s) << "\n";
  }
}

void add_store_options(CLI::App* cmd, args& a) {
  cmd->add_option("--db", a.db, "exemplar database directory (RocksDB)")->required();
  cmd->add_option("--bucket-width", a.bucket_width, "bucket width Δs (fixed when the database is created)");
  cmd->add_option("--bucket-scale", a.scale, "linear or logarithmic (fixed when the database is created)");
  cmd->add_flag("--json", a.as_json, "print JSON");
}

}  // namespace

void add_exemplars_command(CLI::App& app) { add_exemplars_command(app, std::cout, std::cerr); }

void add_exemplars_command(CLI::App& app, std::ostream& out, std::ostream& err) {
  auto a = std::make_shared<args>();
  std::ostream* o = &out;
  std::ostream* e = &err;
  auto* root = app.add_subcommand("exemplars", "the exemplar store: add, sample, stats, import");
  root->require_subcommand(1);

  auto* add = root->add_subcommand("add", "add one exemplar from a code file");
  add_store_options(add, *a);
  add->add_option("--task", a->task, "task id")->required();
  add->add_option("--score", a->score, "its score (settled reward)")->required();
  add->add_option("--code", a->code_file, "file holding the code")->required();
  add->add_option("--id", a->id, "exemplar id (default: derived from task and code)");
  add->callback(guarded(e, [a, o] { run_add(*a, *o); }));

  auto* sample = root->add_subcommand("sample", "draw exemplars as a rollout would and count the buckets");
  add_store_options(sample, *a);
  sample->add_option("--task", a->task, "task id")->required();
  sample->add_option("-n", a->n, "exemplars per draw (distinct buckets)")->capture_default_str();
  sample->add_option("--temperature", a->temperature, "temperature τ of Equation 1")->capture_default_str();
  sample->add_option("--draws", a->draws, "how many draws")->capture_default_str();
  sample->add_option("--seed", a->seed, "generator seed")->capture_default_str();
  sample->add_option("--selector", a->selector, "bucket, uniform or island")->capture_default_str();
  sample->callback(guarded(e, [a, o] { run_sample(*a, *o); }));

  auto* stats = root->add_subcommand("stats", "bucket ranges, counts and means per task");
  add_store_options(stats, *a);
  stats->add_option("--task", a->task, "only this task");
  stats->callback(guarded(e, [a, o] { run_stats(*a, *o); }));

  auto* import = root->add_subcommand("import", "import JSON Lines (task, code, score) or CUDA-L1 rows");
  import->add_option("file", a->import_file, "JSON Lines file")->required();
  import->add_option("--settled", a->settled_files,
                     "CUDA-L1 rows: the evaluator's results here (JSON Lines of job, status, reward, as "
                     "tools/gpu/cuda_l1_suite.py writes them; repeatable, a later file wins); a row takes the reward "
                     "settled for job STEM/L<level>-<task>, and rows not measured or not ok are left out (CUDA-L1's "
                     "own scores are never taken)");
  import->add_option("--tasks-dir", a->tasks_dir,
                     "CUDA-L1 rows: the KernelBench folder the rollouts take tasks from ([run] tasks_dir): a row's "
                     "task is named after its file there (level1/19_ReLU, not level1/19), and a row whose file is "
                     "missing or is not its ref_code is left out");
  add_store_options(import, *a);
  import->callback(guarded(e, [a, o] { run_import(*a, *o); }));
}

}  // namespace crucible::exemplar
