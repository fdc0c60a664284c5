#include "actors/policy/model_config.hpp"

#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "actors/policy/test_support.hpp"
#include "runtime/base/error_text.hpp"

namespace crucible::policy {
namespace {

using json = nlohmann::json;

// Qwen2.5-0.5B's config.json as transformers 4 writes it.
json qwen2_config() {
  return json::parse(R"({
    "architectures": ["Qwen2ForCausalLM"], "attention_dropout": 0.0, "bos_token_id": 151643,
    "eos_token_id": 151643, "hidden_act": "silu", "hidden_size": 896, "initializer_range": 0.02,
    "intermediate_size": 4864, "max_position_embeddings": 32768, "max_window_layers": 24,
    "model_type": "qwen2", "num_attention_heads": 14, "num_hidden_layers": 24, "num_key_value_heads": 2,
    "rms_norm_eps": 1e-06, "rope_scaling": null, "rope_theta": 1000000.0, "sliding_window": 32768,
    "tie_word_embeddings": true, "torch_dtype": "bfloat16", "transformers_version": "4.43.1",
    "use_cache": true, "use_sliding_window": false, "vocab_size": 151936})");
}

json llama_config() {
  return json::parse(R"({
    "architectures": ["LlamaForCausalLM"], "bos_token_id": 1, "eos_token_id": [2, 7],
    "hidden_act": "silu", "hidden_size": 64, "intermediate_size": 160, "max_position_embeddings": 256,
    "model_type": "llama", "num_attention_heads": 4, "num_hidden_layers": 2, "num_key_value_heads": 2,
    "rms_norm_eps": 1e-05, "rope_theta": 10000.0, "tie_word_embeddings": false, "dtype": "float32",
    "vocab_size": 512})");
}

std::string error_of(const json& config) {
  auto c = parse_model_config(config.dump(), "dir/config.json");
  if (c) return "";
  CHECK(c.error().code == errc::invalid_argument);
  CHECK(c.error().message.find("dir/config.json") != std::string::npos);
  return c.error().message;
}

TEST_CASE("a Qwen2 config.json gives its sizes, grouped-query heads, biases and tied embeddings") {
  auto c = parse_model_config(qwen2_config().dump(), "config.json");
  REQUIRE_MESSAGE(c.ok(), crucible::error_text(c));
  CHECK(c->arch == architecture::qwen2);
  CHECK(c->hidden_size == 896);
  CHECK(c->intermediate_size == 4864);
  CHECK(c->num_hidden_layers == 24);
  CHECK(c->num_attention_heads == 14);
  CHECK(c->num_key_value_heads == 2);
  CHECK(c->head_dim == 64);
  CHECK(c->vocab_size == 151936);
  CHECK(c->rope_theta == 1000000.0);
  CHECK(c->rms_norm_eps == 1e-6);
  CHECK(c->tie_word_embeddings);
  CHECK(c->attention_bias);
  CHECK(!c->o_proj_bias);
  CHECK(c->torch_dtype == "bfloat16");
  CHECK(c->bos_token_id == 151643);
  CHECK(c->eos_token_ids == std::vector<std::int64_t>{151643});
  CHECK(c->text().find("Qwen2ForCausalLM hidden=896") == 0);
}

TEST_CASE("a Llama config.json has no biases and may list several end-of-sequence ids") {
  auto c = parse_model_config(llama_config().dump(), "config.json");
  REQUIRE_MESSAGE(c.ok(), crucible::error_text(c));
  CHECK(c->arch == architecture::llama);
  CHECK(!c->attention_bias);
  CHECK(!c->tie_word_embeddings);
  CHECK(c->torch_dtype == "float32");
  CHECK(c->eos_token_ids == std::vector<std::int64_t>{2, 7});
  auto j = llama_config();
  j["attention_bias"] = true;
  j["head_dim"] = 32;
  auto biased = parse_model_config(j.dump(), "config.json");
  REQUIRE(biased.ok());
  CHECK(biased->attention_bias);
  CHECK(biased->o_proj_bias);
  CHECK(biased->head_dim == 32);
}

TEST_CASE("a transformers 5 config with rope_parameters gives rope_theta") {
  auto j = llama_config();
  j.erase("rope_theta");
  j["rope_parameters"] = {{"rope_type", "default"}, {"rope_theta", 500000.0}};
  auto c = parse_model_config(j.dump(), "config.json");
  REQUIRE_MESSAGE(c.ok(), crucible::error_text(c));
  CHECK(c->rope_theta == 500000.0);
  j["rope_parameters"]["rope_type"] = "llama3";
  CHECK(error_of(j).find("rope_parameters.rope_type") != std::string::npos);
}

TEST_CASE("missing num_key_value_heads means one key-value head per attention head") {
  auto j = llama_config();
  j.erase("num_key_value_heads");
  auto c = parse_model_config(j.dump(), "config.json");
  REQUIRE(c.ok());
  CHECK(c->num_key_value_heads == 4);
}

TEST_CASE("an unsupported architecture is refused naming the file and the field") {
  auto j = qwen2_config();
  j["architectures"] = {"MistralForCausalLM"};
  const auto msg = error_of(j);
  CHECK(msg.find("field architectures") != std::string::npos);
  CHECK(msg.find("MistralForCausalLM") != std::string::npos);
}

TEST_CASE("a missing or ill-typed config field is refused naming it") {
  for (const char* field : {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
                            "vocab_size", "rms_norm_eps", "rope_theta", "max_position_embeddings"}) {
    auto j = qwen2_config();
    j.erase(field);
    CHECK_MESSAGE(error_of(j).find(std::string("field ") + field + " is missing") != std::string::npos, field);
  }
  auto j = qwen2_config();
  j["hidden_size"] = "896";
  CHECK(error_of(j).find("field hidden_size is not an integer") != std::string::npos);
  j = qwen2_config();
  j["tie_word_embeddings"] = 1;
  CHECK(error_of(j).find("field tie_word_embeddings") != std::string::npos);
  j = qwen2_config();
  j["use_sliding_window"] = "yes";
  CHECK(!error_of(j).empty());
}

TEST_CASE("inconsistent head counts and unsupported features are refused") {
  auto j = qwen2_config();
  j["num_key_value_heads"] = 3;
  CHECK(error_of(j).find("field num_key_value_heads") != std::string::npos);
  j = qwen2_config();
  j["rope_scaling"] = {{"type", "yarn"}};
  CHECK(error_of(j).find("field rope_scaling") != std::string::npos);
  j = qwen2_config();
  j["hidden_act"] = "gelu";
  CHECK(error_of(j).find("field hidden_act") != std::string::npos);
  j = qwen2_config();
  j["use_sliding_window"] = true;
  CHECK(error_of(j).find("field use_sliding_window") != std::string::npos);
  j = qwen2_config();
  j["torch_dtype"] = "float8";
  CHECK(error_of(j).find("field torch_dtype") != std::string::npos);
  CHECK(parse_model_config("{", "config.json").error().message.find("not valid JSON") != std::string::npos);
}

TEST_CASE("reading a config.json that does not exist says not found") {
  testing::scratch_dir dir;
  auto c = read_model_config(dir / "config.json");
  REQUIRE(!c.ok());
  CHECK(c.error().code == errc::not_found);
  testing::write_file(dir / "config.json", qwen2_config().dump());
  CHECK(read_model_config(dir / "config.json").ok());
}

}  // namespace
}  // namespace crucible::policy
