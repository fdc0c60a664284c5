#include "actors/evaluator/eval_command.hpp"

#include <cmath>

#include <iostream>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "actors/evaluator/statistics.hpp"

namespace {

const std::string tasks = std::string(CRUCIBLE_SOURCE_DIR) + "/configs/tasks/cpu/";

// Runs `crucible eval ARGS` in this process and returns (exit code, stdout).
std::pair<int, std::string> crucible_eval(std::vector<std::string> args) {
  CLI::App app{"crucible"};
  crucible::evaluator::add_eval_command(app);
  args.insert(args.begin(), "eval");
  std::reverse(args.begin(), args.end());  // CLI11 parses a vector from the back
  std::ostringstream out;
  auto* old = std::cout.rdbuf(out.rdbuf());
  int code = 0;
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    code = e.get_exit_code();
  }
  std::cout.rdbuf(old);
  return {code, out.str()};
}

}  // namespace

TEST_CASE("crucible eval --json prints one object and exits 0 whatever the candidate did") {
  auto [code, out] = crucible_eval({"--task", tasks + "scale_relu/task.py", "--candidate",
                                    tasks + "scale_relu/crashing.py", "--protocol", "quick", "--seed", "5", "--json"});
  CHECK(code == 0);
  const auto j = nlohmann::json::parse(out);
  CHECK(j["status"] == "crashed");
  CHECK(j["reward"] == 0);
  CHECK(j["seed"] == 5);
  CHECK(j["protocol"] == "quick");
  CHECK_FALSE(j["reason"].get<std::string>().empty());
}

TEST_CASE("crucible eval reports a measured candidate with its buckets") {
  auto [code, out] = crucible_eval({"--task", tasks + "chain_matmul/task.py", "--candidate",
                                    tasks + "chain_matmul/equal.py", "--protocol", "quick", "--json"});
  CHECK(code == 0);
  const auto j = nlohmann::json::parse(out);
  INFO(out);
  // What the command reports, not what this machine measures: the quick
  // protocol's void bound may void a noisy measurement, which still has its
  // buckets; an ok one's reward is its rounded raw speedup, near 1 by the
  // bound evaluate.test.cpp's check_identity explains.
  CHECK((j["status"] == "ok" || j["status"] == "void"));
  CHECK(j["bucket_means"].size() == 7);
  CHECK(j["rounds"].get<int>() >= 70);
  if (j["status"] == "ok") {
    const double raw = j["speedup_raw"].get<double>();
    CHECK(j["reward"].get<double>() == doctest::Approx(crucible::evaluator::conservative_round(raw)));
    const double se = crucible::evaluator::median_relative_stderr(j["bucket_relative_variance"].get<double>(), 7);
    CHECK(std::abs(raw - 1.0) <= 0.02 + 10 * se * raw);
  }
}

TEST_CASE("crucible eval exits 2 when the evaluation cannot run") {
  CHECK(crucible_eval({"--task", tasks + "chain_matmul/task.py", "--candidate", tasks + "chain_matmul/equal.py",
                       "--protocol", "fastest"}).first == 2);
  CHECK(crucible_eval({"--task", tasks + "chain_matmul/task.py", "--candidate", tasks + "chain_matmul/equal.py",
                       "--device", "gpu7"}).first == 2);
  CHECK(crucible_eval({"--task", tasks + "no/such/task.py", "--candidate", tasks + "chain_matmul/equal.py"}).first !=
        0);
}
