#include "actors/evaluator/eval_command.hpp"

#include <iostream>
#include <sstream>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

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
  CHECK(j["status"] == "ok");
  CHECK(j["reward"].get<double>() >= 0.99);  // identity: within one rounding step (see evaluate.test.cpp)
  CHECK(j["reward"].get<double>() <= 1.01);
  CHECK(j["bucket_means"].size() == 7);
  CHECK(j["rounds"].get<int>() >= 70);
}

TEST_CASE("crucible eval exits 2 when the evaluation cannot run") {
  CHECK(crucible_eval({"--task", tasks + "chain_matmul/task.py", "--candidate", tasks + "chain_matmul/equal.py",
                       "--protocol", "fastest"}).first == 2);
  CHECK(crucible_eval({"--task", tasks + "chain_matmul/task.py", "--candidate", tasks + "chain_matmul/equal.py",
                       "--device", "gpu7"}).first == 2);
  CHECK(crucible_eval({"--task", tasks + "no/such/task.py", "--candidate", tasks + "chain_matmul/equal.py"}).first !=
        0);
}
