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

TEST_CASE("crucible tokenize --chat puts the text in the folder's chat template as the rollout does") {
  testing::scratch_dir dir;
  auto j = testing::byte_level_tokenizer({});
  j["added_tokens"] = {testing::added(256, "<|im_start|>", true), testing::added(257, "<|im_end|>", true)};
  testing::write_file(dir / "tokenizer.json", j.dump());
  const std::string model = dir.path().string();
  std::ostringstream out, err;
  CHECK(run_tokenize({.model_dir = model, .text = "hi", .json = true, .chat = true}, out, err) == 1);
  CHECK(err.str() == "crucible tokenize: --chat: " + model + "/tokenizer_config.json has no chat_template\n");

  testing::write_file(dir / "tokenizer_config.json",
                      testing::read_file(std::filesystem::path(CRUCIBLE_SOURCE_DIR) /
                                         "tests/data/chat_templates/qwen2.5/tokenizer_config.json"));
  out.str("");
  err.str("");
  REQUIRE(run_tokenize({.model_dir = model, .text = "hi", .json = true, .chat = true, .system = "S"}, out, err) == 0);
  auto printed = nlohmann::json::parse(out.str());
  CHECK(printed["text"] == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  CHECK(printed["ids"][0] == 256);
  // 3 <|im_start|> and 2 <|im_end|>, one id each; every other byte one id (no merges).
  CHECK(printed["ids"].size() == 5 + std::string("system\nS" "\n" "user\nhi" "\n" "assistant\n").size());
}

}  // namespace
}  // namespace crucible::policy
