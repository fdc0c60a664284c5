// The kernels a run found (kernels_found.hpp): which candidate each task
// keeps, the export's CUDA-L1 lines, report.html's table, and
// `crucible kernels export` through the real binary.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "runtime/cli/kernels_found.hpp"
#include "runtime/cli/run_report.hpp"
#include "runtime/cli/settlements_file.hpp"
#include "tests/support/process.hpp"
#include "runtime/base/error_text.hpp"

using namespace crucible::cli;
using namespace crucible::testing;
using namespace std::chrono_literals;
using json = nlohmann::json;

namespace {

settled_row row(std::string id, std::string task, std::string status, double reward, bool verified,
                std::int64_t settled_s, std::uint64_t version = 0) {
  settled_row r;
  r.id = std::move(id);
  r.task = std::move(task);
  r.status = std::move(status);
  r.reward = reward;
  r.verified = verified;
  r.settled_ns = settled_s * 1000000000;
  r.submitted_ns = r.settled_ns - 1000000000;
  r.policy_version = version;
  r.group = r.task + "/g";
  r.code = "class ModelNew: # " + r.id + "\n";
  return r;
}

void write_settlements(const std::string& path, const std::vector<settled_row>& rows) {
  std::ofstream out(path, std::ios::trunc);
  for (const auto& r : rows) out << settlement_line(r).dump() << "\n";
}

std::vector<std::string> ids(const std::vector<settled_row>& rows) {
  std::vector<std::string> out;
  for (const auto& r : rows) out.push_back(r.id);
  return out;
}

// A run's settlements: level1/19 has a faster unverified and a slower
// verified kernel; cpu/gelu_tanh only unverified ones and a hack that
// claims more; level2/3 nothing that succeeded.
std::vector<settled_row> a_run() {
  return {row("c1", "level1/19", "Success", 3.5, false, 100, 1),
          row("c2", "level1/19", "Success", 1.8, true, 200, 2),
          row("c3", "level1/19", "Success", 1.2, true, 50, 0),
          row("c4", "cpu/gelu_tanh", "Success", 1.4, false, 300, 3),
          row("c5", "cpu/gelu_tanh", "Hack", 9.0, false, 310, 3),
          row("c6", "level2/3", "Failure", 0, false, 320, 3)};
}

}  // namespace

TEST_CASE("each task keeps its highest-rewarded success, a verified one before any unverified") {
  auto best = best_kernels(a_run());
  // Ordered by KernelBench id first, then by name; level2/3 has no success.
  CHECK(ids(best) == std::vector<std::string>{"c2", "c4"});
  // Without the verified ones, the faster unverified kernel wins.
  auto unverified = a_run();
  unverified[1].verified = unverified[2].verified = false;
  CHECK(ids(best_kernels(unverified)) == std::vector<std::string>{"c1", "c4"});
  // Only successes count, whatever a hack claimed.
  CHECK(ids(best_kernels({row("h", "t", "Hack", 5, true, 1), row("v", "t", "Void", 4, true, 1)})).empty());
}

TEST_CASE("equal rewards go to the kernel settled first, then to the smaller id") {
  CHECK(ids(best_kernels({row("late", "t", "Success", 2, false, 20), row("early", "t", "Success", 2, false, 10)})) ==
        std::vector<std::string>{"early"});
  CHECK(ids(best_kernels({row("b", "t", "Success", 2, false, 10), row("a", "t", "Success", 2, false, 10)})) ==
        std::vector<std::string>{"a"});
}

TEST_CASE("KernelBench-shaped task names give CUDA-L1's level and task id, others none") {
  for (const std::string name : {"level1/19", "level1/19_ReLU", "level1/19_ReLU.py", "L1-19", "a100/L1-19",
                                 "kernelbench/level1/19_ReLU.py"}) {
    CAPTURE(name);
    auto id = kernelbench_id_of(name);
    REQUIRE(id.has_value());
    CHECK(id->level == 1);
    CHECK(id->task == 19);
  }
  for (const std::string name : {"cpu/gelu_tanh", "level1", "levelx/19", "level1/x19", "L1-", "L-19", "L1--19", "19"}) {
    CAPTURE(name);
    CHECK_FALSE(kernelbench_id_of(name).has_value());
  }
  CHECK(cuda_l1_less("level1/9", "level1/10"));
  CHECK(cuda_l1_less("level1/10", "level2/1"));
  CHECK(cuda_l1_less("level3/1", "cpu/a"));
}

TEST_CASE("an export line carries CUDA-L1's field names and the settled values") {
  const std::string dir = temp_dir("kernels-lines");
  write_settlements(dir + "/settlements.jsonl", a_run());
  auto rows = read_settlements_file(dir + "/settlements.jsonl");
  REQUIRE_MESSAGE(rows.ok(), crucible::error_text(rows));
  REQUIRE(rows->size() == 6);
  auto best = best_kernels(*rows);
  REQUIRE(best.size() == 2);

  auto first = kernel_line(best[0], std::string("class Model: pass\n"));
  std::vector<std::string> keys;
  for (auto& [k, v] : first.items()) keys.push_back(k);
  CHECK(keys == std::vector<std::string>{"level_id", "task_id", "ref_code", "custom_code", "score_default", "task",
                                         "candidate_id", "policy_version", "found_unix", "found", "verified"});
  CHECK(first["level_id"] == 1);
  CHECK(first["task_id"] == 19);
  CHECK(first["ref_code"] == "class Model: pass\n");
  CHECK(first["custom_code"] == "class ModelNew: # c2\n");
  CHECK(first["score_default"] == 1.8);
  CHECK(first["task"] == "level1/19");
  CHECK(first["candidate_id"] == "c2");
  CHECK(first["policy_version"] == 2);
  CHECK(first["found_unix"] == 200);
  CHECK(first["found"] == "1970-01-01T00:03:20Z");
  CHECK(first["verified"] == true);

  auto second = kernel_line(best[1], std::nullopt);
  CHECK(second["level_id"].is_null());
  CHECK(second["task_id"].is_null());
  CHECK(second["ref_code"].is_null());
  CHECK(second["task"] == "cpu/gelu_tanh");
  CHECK(second["score_default"] == 1.4);
  CHECK(second["verified"] == false);
}

TEST_CASE("settlements.jsonl keeps the code of successes only, and reads back what it wrote") {
  auto rows = a_run();
  CHECK(settlement_line(rows[0]).contains("code"));
  CHECK_FALSE(settlement_line(rows[4]).contains("code"));  // a hack's code is not a kernel found
  const std::string dir = temp_dir("kernels-roundtrip");
  write_settlements(dir + "/s.jsonl", {rows[1]});
  auto back = read_settlements_file(dir + "/s.jsonl");
  REQUIRE(back.ok());
  REQUIRE(back->size() == 1);
  const auto& r = back->front();
  CHECK(r.id == rows[1].id);
  CHECK(r.group == rows[1].group);
  CHECK(r.task == rows[1].task);
  CHECK(r.reward == rows[1].reward);
  CHECK(r.verified == rows[1].verified);
  CHECK(r.policy_version == rows[1].policy_version);
  CHECK(r.submitted_ns == rows[1].submitted_ns);
  CHECK(r.settled_ns == rows[1].settled_ns);
  CHECK(r.code == rows[1].code);
}

TEST_CASE("a malformed line of settlements.jsonl is an error naming the file and the line") {
  const std::string dir = temp_dir("kernels-malformed");
  const std::string path = dir + "/settlements.jsonl";
  const std::string good = settlement_line(a_run()[0]).dump();
  struct bad_case {
    std::string line, says;
  };
  for (const auto& c : std::vector<bad_case>{{"{not json", "not valid JSON"},
                                             {"[1, 2]", "expected a JSON object"},
                                             {R"({"candidate":"x","task":"t","status":"Success"})", "'reward' is missing"},
                                             {R"({"candidate":"x","task":"t","status":"Success","reward":"fast"})",
                                              "'reward' should be a finite number, found string"},
                                             {R"({"candidate":"x","task":"t","status":"Success","reward":1,)"
                                              R"("policy_version":-1})",
                                              "'policy_version' should be a non-negative integer"},
                                             {R"({"candidate":"x","task":7,"status":"Success","reward":1})",
                                              "'task' should be a string"}}) {
    CAPTURE(c.line);
    std::ofstream(path, std::ios::trunc) << good << "\n\n" << c.line << "\n" << good << "\n";
    auto rows = read_settlements_file(path);
    REQUIRE_FALSE(rows.ok());
    CHECK(rows.error().message.find(path + ":3: ") == 0);
    CHECK(rows.error().message.find(c.says) != std::string::npos);
  }
  auto missing = read_settlements_file(dir + "/nothing.jsonl");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().message.find(dir + "/nothing.jsonl") != std::string::npos);
}

TEST_CASE("report.html shows each task's best kernel in its Kernels found table") {
  const std::string dir = temp_dir("kernels-report");
  auto rows = a_run();
  rows[1].code = "x = a < b\n";
  REQUIRE(write_report(dir + "/report.html", rows, {}, json{{"run_dir", dir}}, 0.1).ok());
  const std::string html = read_file(dir + "/report.html");
  const auto table = html.find("<h2>Kernels found</h2>");
  REQUIRE(table != std::string::npos);
  const std::string part = html.substr(table, html.find("</table>", table) - table);
  CHECK(part.find("<td>level1/19</td><td>1.800</td><td>yes</td><td>2</td><td>1970-01-01T00:03:20Z</td><td>c2</td>") !=
        std::string::npos);
  CHECK(part.find("<td>cpu/gelu_tanh</td><td>1.400</td><td>no</td><td>3</td>") != std::string::npos);
  CHECK(part.find("x = a &lt; b") != std::string::npos);  // the code, escaped, folded in a <details>
  for (const std::string other : {">c1<", ">c3<", ">c5<", "level2/3"}) {
    CAPTURE(other);
    CHECK(part.find(other) == std::string::npos);
  }
}

TEST_CASE("crucible kernels export writes a run folder's kernels as CUDA-L1 lines, and refuses bad input with 2") {
  const std::string dir = temp_dir("kernels-export");
  const std::string run = dir + "/run";
  std::filesystem::create_directories(run);
  std::filesystem::create_directories(dir + "/tasks/level1/19");
  std::ofstream(dir + "/tasks/level1/19/task.py") << "class Model: # the reference\n";
  write_settlements(run + "/settlements.jsonl", a_run());
  // The tasks folder the run recorded.
  std::ofstream(run + "/summary.json") << json{{"tasks_dir", dir + "/tasks"}}.dump();

  auto lines_of = [](const std::string& text) {
    std::vector<json> out;
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line))
      if (!line.empty() && line[0] == '{') out.push_back(json::parse(line));
    return out;
  };
  {
    child c(crucible_binary(), {"kernels", "export", "--run", run, "--out", dir + "/kernels.jsonl"}, dir + "/a.log");
    REQUIRE_MESSAGE(c.wait(30s) == 0, c.log());
    auto lines = lines_of(read_file(dir + "/kernels.jsonl"));
    REQUIRE(lines.size() == 2);
    CHECK(lines[0]["level_id"] == 1);
    CHECK(lines[0]["task_id"] == 19);
    CHECK(lines[0]["ref_code"] == "class Model: # the reference\n");
    CHECK(lines[0]["custom_code"] == "class ModelNew: # c2\n");
    CHECK(lines[0]["score_default"] == 1.8);
    CHECK(lines[0]["candidate_id"] == "c2");
    CHECK(lines[1]["task"] == "cpu/gelu_tanh");
    CHECK(lines[1]["ref_code"].is_null());
    CHECK(c.log().find("2 kernel(s) from 6 settled candidate(s)") != std::string::npos);
  }
  {  // stdout by default; --tasks-dir overrides the recorded folder
    child c(crucible_binary(), {"kernels", "export", "--run", run, "--tasks-dir", dir}, dir + "/b.log");
    REQUIRE_MESSAGE(c.wait(30s) == 0, c.log());
    auto lines = lines_of(c.log());
    REQUIRE(lines.size() == 2);
    CHECK(lines[0]["candidate_id"] == "c2");
    CHECK(lines[0]["ref_code"].is_null());
  }
  {
    child c(crucible_binary(), {"kernels", "export", "--run", dir + "/no-such-run"}, dir + "/c.log");
    CHECK(c.wait(30s) == 2);
    CHECK(c.log().find(dir + "/no-such-run") != std::string::npos);
  }
  {
    std::ofstream(run + "/settlements.jsonl", std::ios::app) << "{\"candidate\": \"broken\"\n";
    child c(crucible_binary(), {"kernels", "export", "--run", run}, dir + "/d.log");
    CHECK(c.wait(30s) == 2);
    CHECK_MESSAGE(c.log().find(run + "/settlements.jsonl:7: not valid JSON") != std::string::npos, c.log());
  }
  {
    std::filesystem::remove(run + "/settlements.jsonl");
    child c(crucible_binary(), {"kernels", "export", "--run", run}, dir + "/e.log");
    CHECK(c.wait(30s) == 2);
    CHECK_MESSAGE(c.log().find(run + "/settlements.jsonl: no such file") != std::string::npos, c.log());
  }
}
