#include "actors/policy/generate_command.hpp"

#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "actors/policy/test_support.hpp"

namespace crucible::policy {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

fs::path golden_model(const std::string& name) {
  return fs::path(CRUCIBLE_SOURCE_DIR) / "tests" / "data" / "policy" / name;
}

TEST_CASE("crucible generate --greedy --json prints the golden continuation of the golden prompt ids") {
  const fs::path dir = golden_model("llama_tiny_tied");
  if (!fs::exists(dir / "golden.json")) {
    MESSAGE("no golden data at " << dir);
    return;
  }
  const json golden = json::parse(testing::read_file(dir / "golden.json"));
  const json& want = golden["greedy"][0];
  std::string ids;
  for (const auto& id : want["prompt_ids"]) ids += (ids.empty() ? "" : ",") + std::to_string(id.get<int>());
  generate_request r;
  r.model_dir = dir.string();
  r.prompt_ids = ids;
  r.max_new_tokens = 4;
  r.greedy = true;
  r.json = true;
  std::ostringstream out, err;
  REQUIRE_MESSAGE(run_generate(r, out, err) == 0, err.str());
  const json got = json::parse(out.str());
  CHECK(got["prompt_ids"] == want["prompt_ids"]);
  // Stops early only at the config's eos id; golden greedy ignores eos.
  const auto n = got["ids"].size();
  REQUIRE(n >= 1);
  for (std::size_t i = 0; i < n; ++i) {
    CHECK(got["ids"][i] == want["ids"][i]);
    CHECK(std::fabs(got["logprobs"][i].get<double>() - want["logprobs"][i].get<double>()) <= 1e-4);
  }
  CHECK(got.contains("text"));
  CHECK(got.contains("finish_reason"));
}

TEST_CASE("crucible generate refuses contradictory or incomplete sampling flags with a message") {
  const fs::path dir = golden_model("llama_tiny_tied");
  generate_request base;
  base.model_dir = dir.string();
  base.prompt_ids = "1,2";
  std::ostringstream out, err;

  SUBCASE("neither --greedy nor --temperature") {
    CHECK(run_generate(base, out, err) == 1);
    CHECK(err.str().find("--greedy or --temperature") != std::string::npos);
  }
  SUBCASE("--temperature without --seed") {
    base.temperature = 0.7;
    CHECK(run_generate(base, out, err) == 1);
    CHECK(err.str().find("--seed") != std::string::npos);
  }
  SUBCASE("--greedy with --temperature") {
    base.greedy = true;
    base.temperature = 0.7;
    CHECK(run_generate(base, out, err) == 1);
    CHECK(err.str().find("excludes") != std::string::npos);
  }
  SUBCASE("both --prompt and --prompt-ids") {
    base.greedy = true;
    base.prompt = "hi";
    CHECK(run_generate(base, out, err) == 1);
    CHECK(err.str().find("exactly one") != std::string::npos);
  }
  SUBCASE("a prompt id that is not a number") {
    base.greedy = true;
    base.prompt_ids = "1,x";
    if (!fs::exists(dir / "config.json")) return;
    CHECK(run_generate(base, out, err) == 1);
    CHECK(err.str().find("\"x\" is not a token id") != std::string::npos);
  }
  SUBCASE("a folder that is not a checkpoint") {
    base.greedy = true;
    base.model_dir = "/nonexistent/model";
    CHECK(run_generate(base, out, err) == 1);
    CHECK(err.str().find("/nonexistent/model") != std::string::npos);
  }
  CHECK(out.str().empty());
}

}  // namespace
}  // namespace crucible::policy
