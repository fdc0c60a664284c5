// Golden tests against Hugging Face: tools/gpu/make_policy_golden.py writes
// tests/data/policy/<name>/ (tokenizer.json, golden.json and, for models,
// config.json and safetensors) on a machine with transformers and tokenizers.
// Until that data is committed these tests say so and pass; once
// tests/data/policy/manifest.json exists (the script writes it last), or with
// -DCRUCIBLE_REQUIRE_POLICY_GOLDEN=ON, every folder it lists must be present
// and must match. Logits and greedy continuations in golden.json are for the
// LibTorch model's tests; here: token ids, decoded text, config, tensors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "actors/policy/checkpoint_weights.hpp"
#include "actors/policy/model_config.hpp"
#include "actors/policy/test_support.hpp"
#include "actors/policy/tokenizer.hpp"
#include "runtime/base/error_text.hpp"

namespace crucible::policy {
namespace {

using json = nlohmann::json;
namespace fs = std::filesystem;

// The folders the script makes; keep in step with GOLDEN_NAMES there.
const std::vector<std::string> kGoldenNames{"qwen2_tiny_sharded", "llama_tiny_tied", "tok_qwen2_style",
                                            "tok_gpt2_style", "tok_gpt2_prefix_space"};

fs::path golden_root() { return fs::path(CRUCIBLE_SOURCE_DIR) / "tests" / "data" / "policy"; }

bool golden_required() {
#ifdef CRUCIBLE_REQUIRE_POLICY_GOLDEN
  return true;
#else
  return fs::exists(golden_root() / "manifest.json");
#endif
}

// The golden.json of `name`, or null when absent and not yet required.
json load_golden(const std::string& name) {
  const fs::path file = golden_root() / name / "golden.json";
  if (!fs::exists(file)) {
    if (golden_required()) FAIL("missing golden data " << file << ": run tools/gpu/make_policy_golden.py");
    MESSAGE("no golden data yet at " << file << " (tools/gpu/make_policy_golden.py makes it on a GPU machine)");
    return nullptr;
  }
  return json::parse(testing::read_file(file));
}

double to_double(dtype type, const std::byte* p) {
  switch (type) {
    case dtype::f32: {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    case dtype::bf16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    case dtype::f16: {
      std::uint16_t h;
      std::memcpy(&h, p, 2);
      const int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
      const double sign = (h & 0x8000) ? -1.0 : 1.0;
      if (exp == 0) return sign * std::ldexp(mant, -24);
      if (exp == 31) return mant ? NAN : sign * INFINITY;
      return sign * std::ldexp(mant + 1024, exp - 25);
    }
    default:
      return NAN;
  }
}

TEST_CASE("the golden data folders are exactly the ones the golden script makes") {
  if (!fs::exists(golden_root())) {
    CHECK_MESSAGE(!golden_required(), "tests/data/policy is missing");
    return;
  }
  for (const auto& entry : fs::directory_iterator(golden_root())) {
    if (!entry.is_directory()) continue;
    const auto name = entry.path().filename().string();
    CHECK_MESSAGE(std::find(kGoldenNames.begin(), kGoldenNames.end(), name) != kGoldenNames.end(),
                  "unexpected golden folder " << name);
  }
  if (golden_required()) {
    for (const auto& name : kGoldenNames) CHECK_MESSAGE(fs::exists(golden_root() / name / "golden.json"), name);
  }
}

TEST_CASE("golden tokenizers encode and decode every string as Hugging Face tokenizers does") {
  for (const auto& name : kGoldenNames) {
    INFO("golden folder " << name);
    const json golden = load_golden(name);
    if (golden.is_null()) continue;
    auto tok = tokenizer::load(golden_root() / name);
    REQUIRE_MESSAGE(tok.ok(), crucible::error_text(tok));
    REQUIRE(golden.contains("encodings"));
    for (const auto& e : golden["encodings"]) {
      const auto text = e["text"].get<std::string>();
      INFO("text " << json(text).dump());
      auto ids = tok->encode(text);
      REQUIRE(ids.ok());
      CHECK(json(*ids) == e["ids"]);
      auto plain = tok->encode(text, {.add_special_tokens = false});
      REQUIRE(plain.ok());
      CHECK(json(*plain) == e["ids_no_special"]);
      CHECK(tok->decode(*ids) == e["decoded"].get<std::string>());
      CHECK(tok->decode(*ids, {.skip_special_tokens = true}) == e["decoded_skip_special"].get<std::string>());
    }
  }
}

TEST_CASE("golden checkpoints give the config and tensors transformers saved") {
  for (const auto& name : kGoldenNames) {
    INFO("golden folder " << name);
    const json golden = load_golden(name);
    if (golden.is_null() || golden.value("kind", "") != "model") continue;
    auto config = read_model_config(golden_root() / name / "config.json");
    REQUIRE_MESSAGE(config.ok(), crucible::error_text(config));
    const json& want = golden["config"];
    CHECK(std::string(to_string(config->arch)) == want["arch"].get<std::string>());
    CHECK(config->hidden_size == want["hidden_size"].get<std::int64_t>());
    CHECK(config->num_hidden_layers == want["num_hidden_layers"].get<std::int64_t>());
    CHECK(config->num_attention_heads == want["num_attention_heads"].get<std::int64_t>());
    CHECK(config->num_key_value_heads == want["num_key_value_heads"].get<std::int64_t>());
    CHECK(config->vocab_size == want["vocab_size"].get<std::int64_t>());
    CHECK(config->tie_word_embeddings == want["tie_word_embeddings"].get<bool>());
    CHECK(config->rope_theta == doctest::Approx(want["rope_theta"].get<double>()));
    CHECK(config->rms_norm_eps == doctest::Approx(want["rms_norm_eps"].get<double>()));

    auto weights = checkpoint_weights::open(golden_root() / name);
    REQUIRE_MESSAGE(weights.ok(), crucible::error_text(weights));
    CHECK(weights->files().size() == golden["shards"].get<std::size_t>());
    std::vector<std::string> names;
    for (const auto& [tensor, _] : golden["tensors"].items()) names.push_back(tensor);
    CHECK(weights->names() == names);
    for (const auto& [tensor, info] : golden["tensors"].items()) {
      INFO("tensor " << tensor);
      auto t = weights->get(tensor);
      REQUIRE(t.ok());
      CHECK(to_string(t->type) == info["dtype"].get<std::string>());
      CHECK(json(t->shape) == info["shape"]);
      double sum = 0, abs_sum = 0;
      const std::size_t size = dtype_size(t->type);
      for (std::size_t i = 0; i < t->bytes.size(); i += size) {
        const double v = to_double(t->type, t->bytes.data() + i);
        sum += v;
        abs_sum += std::fabs(v);
      }
      // Absolute tolerances relative to the tensor's magnitude: Approx's
      // relative one fails for all-zero tensors (0 vs 0 with scale 0).
      const double tolerance = 1e-6 * abs_sum + 1e-12;
      CHECK(std::fabs(sum - info["sum"].get<double>()) <= tolerance);
      CHECK(std::fabs(abs_sum - info["abs_sum"].get<double>()) <= tolerance);
    }
  }
}

}  // namespace
}  // namespace crucible::policy
