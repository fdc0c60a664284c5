// Import files and the exemplars command end to end on a RocksDB directory.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "actors/exemplar/exemplar_import.hpp"
#include "actors/exemplar/exemplars_command.hpp"
#include "storage/temp_dir.hpp"

using namespace crucible;
using namespace crucible::exemplar;
using nlohmann::json;

namespace {

// Runs `crucible exemplars ARGS...`; returns its output, or throws what the
// command threw.
std::string run(std::vector<std::string> argv, std::ostream* err_copy = nullptr) {
  CLI::App app{"crucible"};
  std::ostringstream out, err;
  add_exemplars_command(app, out, err);
  struct copy_err {
    std::ostringstream& from;
    std::ostream* to;
    ~copy_err() {
      if (to) *to << from.str();
    }
  } copy{err, err_copy};
  std::reverse(argv.begin(), argv.end());  // CLI11 parses a reversed vector
  app.parse(argv);
  return out.str();
}

std::string write_file(const storage::temp_dir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.sub(name), std::ios::binary) << text;
  return dir.sub(name);
}

// Runs a command that must fail; returns what it printed to the error stream
// (which must be what the exception carries).
std::string error_of(std::vector<std::string> argv) {
  std::ostringstream err;
  try {
    run(std::move(argv), &err);
  } catch (const CLI::RuntimeError& e) {
    CHECK(e.get_exit_code() != 0);
    CHECK(err.str() == std::string(e.what()) + "\n");
    return err.str();
  }
  FAIL("the command succeeded");
  return {};
}

}  // namespace

TEST_CASE("both line formats are read, and ids are derived when absent") {
  std::istringstream in(
      R"({"task": "level1/3", "code": "a", "score": 1.5})"
      "\n\n"
      R"({"level_id": 2, "task_id": 17, "custom_code": "b", "score_default": 2.25, "extra": true})"
      "\n"
      R"({"task": "t", "code": "c", "score": 3, "id": "cand-9"})"
      "\n");
  // The CUDA-L1 row takes the reward settled here for a100/L2-17, not its 2.25.
  cuda_l1_import settled{{{"a100/L2-17", {"ok", 1.31}}}, {}};
  auto rows = parse_exemplar_lines(in, "/data/a100.json", &settled);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 3);
  CHECK((*rows)[0].task == "level1/3");
  CHECK((*rows)[0].id == derived_exemplar_id("level1/3", "a"));
  CHECK((*rows)[1].task == "level2/17");
  CHECK((*rows)[1].code == "b");
  CHECK((*rows)[1].score == 1.31);
  CHECK((*rows)[2].id == "cand-9");
}

TEST_CASE("CUDA-L1 rows as released: no code, not measured here and not ok are left out and counted") {
  // a100.json line 4 as CUDA-L1 released it: no kernel for the task, null scores.
  std::istringstream in(
      R"({"level_id": 1, "task_id": 4, "custom_code": null, "score_default": null})"
      "\n"
      // a100.json line 30: no kernel either, released as the text "None".
      R"({"level_id": 1, "task_id": 30, "custom_code": "None", "score_default": null})"
      "\n"
      R"({"level_id": 1, "task_id": 5, "custom_code": "k5", "score_default": 3.0})"
      "\n"
      R"({"level_id": 1, "task_id": 6, "custom_code": "k6", "score_default": 9.0})"
      "\n"
      R"({"level_id": 1, "task_id": 7, "custom_code": "k7", "score_default": 2.0})"
      "\n");
  cuda_l1_import settled{{{"a100/L1-5", {"ok", 0.98}}, {"a100/L1-6", {"hack", 0.0}}, {"l40/L1-7", {"ok", 2.0}}}, {}};
  import_counts counts;
  auto rows = parse_exemplar_lines(in, "a100.json", &settled, &counts);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 1);
  CHECK((*rows)[0].task == "level1/5");
  CHECK((*rows)[0].score == 0.98);
  CHECK(counts.no_code == 2);
  CHECK(counts.not_measured == 1);  // L1-7 was measured for l40.json, not for this file
  CHECK(counts.not_ok == 1);

  // Without settled results a CUDA-L1 row says why it cannot be imported.
  std::istringstream again(R"({"level_id": 1, "task_id": 5, "custom_code": "k5", "score_default": 3.0})");
  auto refused = parse_exemplar_lines(again, "a100.json");
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().message.find("a100.json:1: field 'score_default'") != std::string::npos);
  CHECK(refused.error().message.find("--settled") != std::string::npos);
}

TEST_CASE("with a tasks folder, CUDA-L1 rows are named as the rollouts name its KernelBench files, and left out when the file is missing or another reference") {
  storage::temp_dir dir("exemplars-kb");
  std::filesystem::create_directories(dir.sub("kb/level1"));
  std::ofstream(dir.sub("kb/level1/19_ReLU.py")) << "relu reference";
  std::ofstream(dir.sub("kb/level1/23_Softmax.py")) << "softmax reference";
  std::ofstream(dir.sub("kb/level1/230_Other.py")) << "not task 23";  // 23_ is the prefix, not 23
  // A task set laid out as folders (tools/gpu/make_kernelbench_tasks.py): ID/task.py.
  std::filesystem::create_directories(dir.sub("kb/level1/26_GELU_"));
  std::ofstream(dir.sub("kb/level1/26_GELU_/task.py")) << "gelu reference";
  auto row = [](int task, const std::string& ref) {
    return json{{"level_id", 1}, {"task_id", task}, {"ref_code", ref}, {"custom_code", "k" + std::to_string(task)},
                {"score_default", 9.0}}.dump() + "\n";
  };
  std::istringstream in(row(19, "relu reference") + row(23, "an older softmax") + row(40, "layernorm reference") +
                        row(26, "gelu reference"));
  cuda_l1_import l1{{{"h20/L1-19", {"ok", 1.07}}, {"h20/L1-23", {"ok", 1.5}}, {"h20/L1-40", {"ok", 1.2}},
                     {"h20/L1-26", {"ok", 1.0}}},
                    dir.sub("kb")};
  import_counts counts;
  auto rows = parse_exemplar_lines(in, "h20.json", &l1, &counts);
  REQUIRE(rows.ok());
  REQUIRE(rows->size() == 2);
  CHECK((*rows)[0].task == "level1/19_ReLU");
  CHECK((*rows)[0].score == 1.07);
  CHECK((*rows)[0].id == derived_exemplar_id("level1/19_ReLU", "k19"));
  CHECK((*rows)[1].task == "level1/26_GELU_");
  CHECK(counts.reference_differs == 1);  // L1-23 was measured against another file than the rollouts' task
  CHECK(counts.no_task_file == 1);       // L1-40 has no task file there
  CHECK(counts.total() == 2);
}

TEST_CASE("several results files: a later file's row wins for the same job") {
  storage::temp_dir dir("exemplars-settled");
  auto first = write_file(dir, "first.jsonl",
                          json{{"job", "a100/L1-1"}, {"status", "ok"}, {"reward", 1.5}}.dump() + "\n" +
                              json{{"job", "a100/L1-2"}, {"status", "incorrect"}, {"reward", 0}}.dump() + "\n");
  auto second = write_file(dir, "second.jsonl", json{{"job", "a100/L1-1"}, {"status", "hack"}, {"reward", 0}}.dump() + "\n");
  auto merged = read_settled_results(std::vector<std::string>{first, second});
  REQUIRE(merged.ok());
  CHECK(merged->size() == 2);
  CHECK(merged->at("a100/L1-1").status == "hack");
  CHECK(merged->at("a100/L1-2").status == "incorrect");
  CHECK_FALSE(read_settled_results(std::vector<std::string>{first, dir.sub("missing.jsonl")}).ok());
}

TEST_CASE("a bad line is reported with file, line and field") {
  auto check = [](const std::string& text, const std::string& expected) {
    std::istringstream in(R"({"task": "t", "code": "a", "score": 1})" "\n" + text + "\n");
    auto rows = parse_exemplar_lines(in, "seed.jsonl");
    REQUIRE_FALSE(rows.ok());
    CHECK(rows.error().code == errc::invalid_argument);
    CHECK_MESSAGE(rows.error().message.find(expected) != std::string::npos, rows.error().message);
  };
  check(R"({"task": "t", "code": "a", "score": "fast"})", "seed.jsonl:2: field 'score': expected a number");
  check(R"({"task": "t", "score": 1})", "seed.jsonl:2: field 'code': missing");
  check(R"({"level_id": 1, "task_id": 2, "custom_code": 7})", "seed.jsonl:2: field 'custom_code': expected a string");
  check(R"({"level_id": 1.5, "task_id": 2, "custom_code": "x", "score_default": 1})", "field 'level_id'");
  check(R"({"task": "t", "code": "a", "score": 1)", "seed.jsonl:2: not valid JSON");
  check(R"([1, 2])", "seed.jsonl:2: expected a JSON object");
  check(R"({"task": "", "code": "a", "score": 1})", "field 'task'");
}

TEST_CASE("the exemplars command adds, imports, samples and reports statistics") {
  storage::temp_dir dir("exemplars-cli");
  const std::string db = dir.sub("db");
  std::string code = write_file(dir, "k.py", "class ModelNew: pass\n");
  auto added = json::parse(run({"exemplars", "add", "--db", db, "--task", "t", "--score", "1.23", "--code", code, "--json"}));
  CHECK(added["outcome"] == "inserted");
  CHECK(added["bucket"] == 12);
  added = json::parse(run({"exemplars", "add", "--db", db, "--task", "t", "--score", "1.23", "--code", code, "--json"}));
  CHECK(added["outcome"] == "duplicate");

  std::string lines;
  for (int i = 0; i < 30; ++i)
    lines += json{{"task", "t"}, {"code", "k" + std::to_string(i)}, {"score", 1.0 + 0.1 * (i % 6)}}.dump() + "\n";
  lines += json{{"level_id", 1}, {"task_id", 5}, {"custom_code", "z"}, {"score_default", 4.0}}.dump() + "\n";
  lines += json{{"level_id", 1}, {"task_id", 6}, {"custom_code", nullptr}, {"score_default", nullptr}}.dump() + "\n";
  std::string file = write_file(dir, "seed.jsonl", lines);
  std::string settled = write_file(dir, "results.jsonl", json{{"job", "seed/L1-5"}, {"status", "ok"}, {"reward", 4.0}}.dump() + "\n");
  auto imported = json::parse(run({"exemplars", "import", file, "--db", db, "--settled", settled, "--json"}));
  CHECK(imported["inserted"] == 31);
  CHECK(imported["no_code"] == 1);
  imported = json::parse(run({"exemplars", "import", file, "--db", db, "--settled", settled, "--json"}));
  CHECK(imported["inserted"] == 0);
  CHECK(imported["duplicates"] == 31);

  // CUDA-L1's release with two results files and the rollouts' KernelBench
  // folder: the kernel enters under the task's file name with the reward of
  // the later results file, never CUDA-L1's score_default.
  std::filesystem::create_directories(dir.sub("kb/level2"));
  std::ofstream(dir.sub("kb/level2/7_Conv.py")) << "conv";
  std::string release = write_file(dir, "h20.json", json{{"level_id", 2}, {"task_id", 7}, {"ref_code", "conv"},
                                                        {"custom_code", "fast conv"}, {"score_default", 6.0}}.dump() + "\n");
  std::string before = write_file(dir, "before.jsonl", json{{"job", "h20/L2-7"}, {"status", "ok"}, {"reward", 1.1}}.dump() + "\n");
  std::string after = write_file(dir, "after.jsonl", json{{"job", "h20/L2-7"}, {"status", "ok"}, {"reward", 1.4}}.dump() + "\n");
  imported = json::parse(run({"exemplars", "import", release, "--db", db, "--settled", before, "--settled", after,
                              "--tasks-dir", dir.sub("kb"), "--json"}));
  CHECK(imported["inserted"] == 1);
  auto conv = json::parse(run({"exemplars", "sample", "--db", db, "--task", "level2/7_Conv", "-n", "1", "--json"}));
  REQUIRE(conv["first_draw"].size() == 1);
  CHECK(conv["first_draw"][0]["score"] == 1.4);
  CHECK(conv["first_draw"][0]["code"] == "fast conv");
  CHECK(run({"exemplars", "import", release, "--db", db, "--settled", after, "--tasks-dir", dir.sub("kb")})
            .find("1 rows, 0 inserted, 1 already present") != std::string::npos);

  auto stats = json::parse(run({"exemplars", "stats", "--db", db, "--json"}));
  REQUIRE(stats["tasks"].size() == 3);
  CHECK(stats["tasks"][0]["task"] == "level1/5");
  CHECK(stats["tasks"][1]["task"] == "level2/7_Conv");
  CHECK(stats["tasks"][2]["exemplars"] == 31);
  CHECK(stats["tasks"][2]["buckets"].size() == 6);

  auto sample = json::parse(run({"exemplars", "sample", "--db", db, "--task", "t", "-n", "2", "--temperature", "0.5",
                                 "--draws", "1000", "--seed", "3", "--json"}));
  std::uint64_t drawn = 0, pairs = 0;
  for (const auto& b : sample["buckets"]) drawn += b["drawn"].get<std::uint64_t>();
  for (const auto& p : sample["pairs"]) {
    CHECK(p["buckets"].size() == 2);
    CHECK(p["buckets"][0] != p["buckets"][1]);
    pairs += p["drawn"].get<std::uint64_t>();
  }
  CHECK(drawn == 2000);
  CHECK(pairs == 1000);
  CHECK(sample["first_draw"].size() == 2);
  // The same seed prints the same figures.
  CHECK(run({"exemplars", "sample", "--db", db, "--task", "t", "--temperature", "0.5", "--draws", "50", "--seed", "3"}) ==
        run({"exemplars", "sample", "--db", db, "--task", "t", "--temperature", "0.5", "--draws", "50", "--seed", "3"}));
}

TEST_CASE("the exemplars command fails with a clear message on bad input") {
  storage::temp_dir dir("exemplars-cli-bad");
  const std::string db = dir.sub("db");
  std::string bad = write_file(dir, "bad.jsonl", R"({"task": "t", "code": "a", "score": 1})" "\n" R"({"task": "t", "code": 3, "score": 1})" "\n");
  auto message = error_of({"exemplars", "import", bad, "--db", db});
  CHECK(message.find(bad + ":2: field 'code'") != std::string::npos);
  // Nothing of the bad file was imported: the file is checked before the
  // database is even opened.
  CHECK_FALSE(std::filesystem::exists(db));
  CHECK(error_of({"exemplars", "add", "--db", db, "--task", "t", "--score", "1", "--code", dir.sub("missing.py")})
            .find("missing.py") != std::string::npos);
  CHECK(error_of({"exemplars", "stats", "--db", dir.sub("typo")}).find("typo: no exemplar database") != std::string::npos);
  std::string code = write_file(dir, "k.py", "x");
  run({"exemplars", "add", "--db", db, "--task", "t", "--score", "1", "--code", code});
  CHECK(error_of({"exemplars", "add", "--db", db, "--task", "t", "--score", "nan", "--code", code}).find("score") != std::string::npos);
  CHECK(error_of({"exemplars", "sample", "--db", db, "--task", "nothing"}).find("no exemplars") != std::string::npos);
  CHECK(error_of({"exemplars", "sample", "--db", db, "--task", "t", "--temperature", "0"}).find("temperature") != std::string::npos);
  auto stats = json::parse(run({"exemplars", "stats", "--db", db, "--json"}));
  CHECK(stats["tasks"].size() == 1);
}
