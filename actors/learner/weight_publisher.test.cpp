// The learner's publication: the in-memory image is byte for byte what
// save_causal_lm writes (in the checkpoint's dtype), hashed once, and a
// publish_dir version is a policy folder the rollout loads as it is.
// LibTorch first: glog defines a CHECK that doctest's must replace.
#include "actors/learner/learner_test_support.hpp"

#include <doctest/doctest.h>

#include "actors/learner/weight_publisher.hpp"
#include "actors/policy/test_support.hpp"

namespace crucible::learner {
namespace {

std::string text_of(std::span<const std::uint8_t> bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

TEST_CASE("a published version holds the bytes save_causal_lm writes and a publish_dir version loads as a policy") {
  torch::set_num_threads(1);
  policy::testing::scratch_dir dir;
  std::filesystem::create_directories(dir / "tokenizer");
  policy::testing::write_file(dir / "tokenizer" / "tokenizer.json", policy::testing::byte_level_tokenizer({}).dump());
  for (const std::string dtype : {"float32", "bfloat16"}) {
    CAPTURE(dtype);
    auto config = testing::tiny_config();
    config.torch_dtype = dtype;
    auto model = std::make_shared<policy::causal_lm>(config, policy::model_placement{"cpu", policy::dtype::f32});
    initialise_weights(*model, 5);
    policy::save_options whole;
    whole.max_shard_bytes = ~std::uint64_t{0};
    REQUIRE(policy::save_causal_lm(*model, dir / ("saved-" + dtype), whole).ok());
    const auto expected = policy::testing::read_file(dir / ("saved-" + dtype) / "model.safetensors");

    weight_publisher_options chunks;
    chunks.chunk_bytes = 5000;
    weight_publisher in_memory(chunks);
    auto p = in_memory.publish(*model, 3);
    REQUIRE_MESSAGE(p.ok(), (p.ok() ? "" : p.error().text()));
    CHECK(text_of(in_memory.bytes()) == expected);
    CHECK(p->version == 3);
    CHECK(p->path.empty());
    CHECK(p->total_bytes == expected.size());
    CHECK(p->chunks == (expected.size() + 4999) / 5000);
    CHECK(p->sha256 == weights_digest(in_memory.bytes()));

    weight_publisher_options shared;
    shared.publish_dir = (dir / ("published-" + dtype)).string();
    shared.tokenizer_from = (dir / "tokenizer").string();
    weight_publisher to_folder(shared);
    auto q = to_folder.publish(*model, 4);
    REQUIRE_MESSAGE(q.ok(), (q.ok() ? "" : q.error().text()));
    CHECK(q->path == (dir / ("published-" + dtype) / "v-4").string());
    CHECK(q->chunks == 0);
    CHECK(q->sha256 == p->sha256);
    CHECK(policy::testing::read_file(std::filesystem::path(q->path) / "model.safetensors") == expected);
    auto loaded = policy::policy::load(q->path, {"cpu", policy::dtype::f32});
    REQUIRE_MESSAGE(loaded.ok(), (loaded.ok() ? "" : loaded.error().text()));

    // The next version reuses the buffers and carries the new weights.
    {
      torch::NoGradGuard no_grad;
      model->parameters()[0].add_(1.0);
    }
    auto r = in_memory.publish(*model, 5);
    REQUIRE(r.ok());
    CHECK(r->sha256 != p->sha256);
    REQUIRE(policy::save_causal_lm(*model, dir / ("saved-" + dtype), whole).ok());
    CHECK(text_of(in_memory.bytes()) == policy::testing::read_file(dir / ("saved-" + dtype) / "model.safetensors"));
  }
}

}  // namespace
}  // namespace crucible::learner
