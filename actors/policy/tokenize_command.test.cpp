#include "actors/policy/tokenize_command.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "actors/policy/test_support.hpp"
#include "actors/policy/tokenizer_test_support.hpp"

namespace crucible::policy {
namespace {

TEST_CASE("crucible tokenize --json prints the ids and the decoded text") {
  testing::scratch_dir dir;
  auto j = testing::byte_level_tokenizer({{"h", "i"}});
  j["added_tokens"] = {testing::added(257, "<|endoftext|>", true)};
  testing::write_file(dir / "tokenizer.json", j.dump());

  CLI::App app("crucible");
  add_tokenize_command(app);
  std::ostringstream out, err;
  CHECK(run_tokenize({.model_dir = dir.path().string(), .text = "hi 😀<|endoftext|>", .json = true}, out, err) == 0);
  auto printed = nlohmann::json::parse(out.str());
  CHECK(printed["ids"] == nlohmann::json::array({256, ' ', 0xF0, 0x9F, 0x98, 0x80, 257}));
  CHECK(printed["text"] == "hi 😀<|endoftext|>");
  CHECK(err.str().empty());
}

TEST_CASE("crucible tokenize parses its options and reports a missing tokenizer") {
  testing::scratch_dir dir;
  CLI::App app("crucible");
  add_tokenize_command(app);
  const std::string model = dir.path().string();
  CHECK_THROWS_AS(app.parse("tokenize --model " + model + " --text hi --json", false), CLI::RuntimeError);
  std::ostringstream out, err;
  CHECK(run_tokenize({.model_dir = model, .text = "hi"}, out, err) == 1);
  CHECK(err.str().find("tokenizer.json") != std::string::npos);
}

}  // namespace
}  // namespace crucible::policy
