// `crucible run`, the quick-start pipeline, end to end: the hub, a CPU
// evaluator and the exemplar store in one process over the real bus.
#include <doctest/doctest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/support/process.hpp"

using namespace crucible::testing;
using namespace std::chrono_literals;

TEST_CASE("crucible run measures candidates through the hub and stores the successes as exemplars") {
  std::string dir = temp_dir("run");
  std::string config = dir + "/run.toml";
  std::ofstream(config) << "[log]\nlevel = \"warn\"\n[run]\ntasks_dir = \"" << CRUCIBLE_SOURCE_DIR
                        << "/configs/tasks\"\ntasks = [\"cpu/gelu_tanh\"]\nvariants = [\"equal\", \"incorrect\"]\n";
  child run(crucible_binary(), {"run", config, "--run-dir", dir + "/out"}, dir + "/run.out");
  REQUIRE(run.wait(300s) == 0);
  auto summary = nlohmann::json::parse(read_file(dir + "/out/summary.json"));
  CHECK(summary["measured"] == 2);
  // The identity candidate's figures belong to the evaluator's tests; here a
  // loaded machine may void it, and the pipeline must carry either outcome.
  int successes = summary["successes"];
  CHECK(summary["exemplars_inserted"] == successes);
  for (auto& row : summary["rows"]) {
    CAPTURE(row.dump());
    if (row["candidate"] == "cpu/gelu_tanh/equal") {
      CHECK((row["status"] == "Ok" || row["status"] == "Void"));
      if (row["status"] == "Ok") CHECK(row["reward"].get<double>() == doctest::Approx(1.0));
    } else {
      CHECK(row["status"] == "Incorrect");
      CHECK(row["reward"].get<double>() == 0.0);
    }
  }
  CHECK(summary["draws"]["cpu/gelu_tanh"].size() == static_cast<std::size_t>(successes));
}
