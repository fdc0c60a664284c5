#include "actors/policy/safetensors.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "actors/policy/checkpoint_weights.hpp"
#include "actors/policy/test_support.hpp"
#include "runtime/base/error_text.hpp"

namespace crucible::policy {
namespace {

using testing::read_file;
using testing::scratch_dir;
using testing::write_file;

template <class T>
std::span<const std::byte> as_bytes(const std::vector<T>& v) {
  return std::as_bytes(std::span<const T>(v));
}

// A file with `header` (JSON text) and `data_bytes` bytes of data.
std::string raw_file(const std::string& header, std::size_t data_bytes) {
  std::string out(8, '\0');
  const std::uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((n >> (8 * i)) & 0xff);
  return out + header + std::string(data_bytes, '\x01');
}

// Opens a file holding `bytes` and returns the error message (empty when it opened).
std::string open_error(const scratch_dir& dir, const std::string& bytes) {
  write_file(dir / "bad.safetensors", bytes);
  auto f = safetensors_file::open(dir / "bad.safetensors");
  if (f) return "";
  CHECK(f.error().code == errc::corrupt);
  CHECK(f.error().message.find("bad.safetensors") != std::string::npos);
  return f.error().message;
}

TEST_CASE("a safetensors file written by crucible reads back with the same names, dtypes, shapes and bytes") {
  scratch_dir dir;
  std::vector<float> w{1.5f, -2.0f, 3.25f, 0.0f, 7.0f, -0.5f};
  std::vector<std::uint16_t> bf{0x3f80, 0xbf80, 0x4000};  // 1, -1, 2 in bfloat16
  std::vector<std::uint16_t> hf{0x3c00, 0xc000};          // 1, -2 in float16
  std::vector<std::int64_t> ids{1, -2, 3};
  std::vector<tensor_view> tensors{
      {"model.layers.0.w", dtype::f32, {2, 3}, as_bytes(w)},
      {"b.bf16", dtype::bf16, {3}, as_bytes(bf)},
      {"a.f16", dtype::f16, {1, 2}, as_bytes(hf)},
      {"ids", dtype::i64, {3}, as_bytes(ids)},
      {"empty", dtype::f32, {0, 4}, {}},
  };
  REQUIRE(write_safetensors(dir / "m.safetensors", tensors).ok());

  auto file = safetensors_file::open(dir / "m.safetensors");
  REQUIRE_MESSAGE(file.ok(), crucible::error_text(file));
  CHECK(file->tensors().size() == 5);
  CHECK(file->metadata().at("format") == "pt");
  for (const auto& t : tensors) {
    const tensor_view* got = file->find(t.name);
    REQUIRE(got != nullptr);
    CHECK(got->type == t.type);
    CHECK(got->shape == t.shape);
    REQUIRE(got->bytes.size() == t.bytes.size());
    CHECK(std::memcmp(got->bytes.data(), t.bytes.data(), t.bytes.size()) == 0);
  }
  CHECK(file->find("missing") == nullptr);
  CHECK(file->find("model.layers.0.w")->numel() == 6);
  CHECK(file->find("model.layers.0.w")->text() == "model.layers.0.w F32 [2, 3]");
}

// Three tensors of three element sizes, named in the reverse of size order.
struct mixed_tensors {
  std::vector<std::uint16_t> h{1, 2, 3};
  std::vector<double> d{1.0};
  std::vector<std::int32_t> i{5, 6, 7};
  std::vector<tensor_view> views() const {
    return {{"z", dtype::f16, {3}, as_bytes(h)}, {"y", dtype::i32, {3}, as_bytes(i)}, {"x", dtype::f64, {1}, as_bytes(d)}};
  }
};

TEST_CASE("a written safetensors header is padded to 8 bytes with sorted keys and aligned tensors") {
  scratch_dir dir;
  mixed_tensors mixed;
  const auto tensors = mixed.views();
  REQUIRE(write_safetensors(dir / "m.safetensors", tensors).ok());
  const std::string bytes = read_file(dir / "m.safetensors");
  std::uint64_t n = 0;
  for (int k = 7; k >= 0; --k) n = (n << 8) | static_cast<std::uint8_t>(bytes[k]);
  CHECK(n % 8 == 0);
  const std::string header = bytes.substr(8, n);
  CHECK(header.find("\"__metadata__\":{\"format\":\"pt\"}") != std::string::npos);
  CHECK(header.find("\"x\"") < header.find("\"y\""));
  CHECK(header.find("\"y\"") < header.find("\"z\""));
  auto j = nlohmann::json::parse(header);
  // Largest elements first, so each tensor starts at a multiple of its size.
  CHECK(j["x"]["data_offsets"] == nlohmann::json::array({0, 8}));
  CHECK(j["y"]["data_offsets"] == nlohmann::json::array({8, 20}));
  CHECK(j["z"]["data_offsets"] == nlohmann::json::array({20, 26}));
}

TEST_CASE("a buffer filled at plan_safetensors' offsets holds the same bytes as the file write_safetensors writes") {
  scratch_dir dir;
  mixed_tensors mixed;
  const auto tensors = mixed.views();
  REQUIRE(write_safetensors(dir / "m.safetensors", tensors).ok());
  auto layout = plan_safetensors(tensors);
  REQUIRE(layout.ok());
  std::string filled(layout->total_bytes, '\0');
  std::memcpy(filled.data(), layout->header.data(), layout->header.size());
  for (std::size_t k = 0; k < tensors.size(); ++k)
    std::memcpy(filled.data() + layout->offsets[k], tensors[k].bytes.data(), tensors[k].bytes.size());
  CHECK(filled == read_file(dir / "m.safetensors"));
  std::vector<tensor_view> twice{{"w", dtype::f32, {3}, {}}, {"w", dtype::f32, {3}, {}}};
  CHECK(plan_safetensors(twice).error().code == errc::invalid_argument);
}

TEST_CASE("writing a tensor whose bytes do not match its shape is refused") {
  scratch_dir dir;
  std::vector<float> w{1, 2, 3};
  std::vector<tensor_view> tensors{{"w", dtype::f32, {2, 2}, as_bytes(w)}};
  auto s = write_safetensors(dir / "m.safetensors", tensors);
  REQUIRE(!s.ok());
  CHECK(s.error().code == errc::invalid_argument);
  CHECK(s.error().message.find("w F32 [2, 2]") != std::string::npos);
  std::vector<tensor_view> twice{{"w", dtype::f32, {3}, as_bytes(w)}, {"w", dtype::f32, {3}, as_bytes(w)}};
  CHECK(!write_safetensors(dir / "m.safetensors", twice).ok());
}

TEST_CASE("a truncated safetensors file is reported with its size") {
  scratch_dir dir;
  const auto msg = open_error(dir, "abc");
  CHECK(msg.find("truncated") != std::string::npos);
  CHECK(msg.find("3 bytes") != std::string::npos);
}

TEST_CASE("a safetensors header length beyond the end of the file is reported") {
  scratch_dir dir;
  std::string bytes = raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 4);
  bytes[0] = static_cast<char>(0xff);  // header length now far larger than the file
  const auto msg = open_error(dir, bytes);
  CHECK(msg.find("header length") != std::string::npos);
  CHECK(msg.find("past the end") != std::string::npos);
}

TEST_CASE("a safetensors header that is not JSON is reported") {
  scratch_dir dir;
  CHECK(open_error(dir, raw_file("{not json", 0)).find("not valid JSON") != std::string::npos);
}

TEST_CASE("an unknown safetensors dtype is reported with the tensor's field") {
  scratch_dir dir;
  const auto msg = open_error(dir, raw_file(R"({"w":{"dtype":"F7","shape":[1],"data_offsets":[0,1]}})", 1));
  CHECK(msg.find("w.dtype") != std::string::npos);
  CHECK(msg.find("F7") != std::string::npos);
}

TEST_CASE("safetensors offsets beyond the data section are reported") {
  scratch_dir dir;
  const auto msg = open_error(dir, raw_file(R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 4));
  CHECK(msg.find("w.data_offsets") != std::string::npos);
  CHECK(msg.find("out of range") != std::string::npos);
}

TEST_CASE("overlapping safetensors offsets are reported") {
  scratch_dir dir;
  const auto msg = open_error(
      dir, raw_file(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})", 12));
  CHECK(msg.find("b.data_offsets overlap those of a") != std::string::npos);
}

TEST_CASE("a gap between safetensors tensors is reported") {
  scratch_dir dir;
  const auto msg = open_error(
      dir, raw_file(R"({"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"b":{"dtype":"F32","shape":[1],"data_offsets":[8,12]}})", 12));
  CHECK(msg.find("b.data_offsets leave a gap") != std::string::npos);
}

TEST_CASE("a safetensors shape that does not match its byte range is reported") {
  scratch_dir dir;
  const auto msg = open_error(dir, raw_file(R"({"w":{"dtype":"BF16","shape":[3,2],"data_offsets":[0,8]}})", 8));
  CHECK(msg.find("field w: shape [3, 2] of BF16 needs 12 bytes but data_offsets span 8") != std::string::npos);
}

TEST_CASE("a safetensors shape whose element count overflows an int64 is reported, though it spans no bytes") {
  // Found with fuzz/safetensors.fuzz.cpp: [2^62, 2, 0] of U8 passed, and numel() overflowed.
  scratch_dir dir;
  auto kept = read_file(std::filesystem::path(CRUCIBLE_SOURCE_DIR) / "fuzz/regressions/safetensors/numel_overflow");
  REQUIRE_FALSE(kept.empty());
  auto e = open_error(dir, kept);
  CHECK(e.find("field x: shape [4611686018427387904, 2, 0] of U8 needs too many bytes") != std::string::npos);
}

TEST_CASE("safetensors data not covered by any tensor is reported") {
  scratch_dir dir;
  const auto msg = open_error(dir, raw_file(R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})", 12));
  CHECK(msg.find("holds 12 bytes but the tensors cover 4") != std::string::npos);
}

TEST_CASE("a missing safetensors field is reported with its name") {
  scratch_dir dir;
  CHECK(open_error(dir, raw_file(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", 4)).find("w.shape") != std::string::npos);
  CHECK(open_error(dir, raw_file(R"({"w":{"dtype":"F32","shape":[1]}})", 4)).find("w.data_offsets") != std::string::npos);
  CHECK(open_error(dir, raw_file(R"({"w":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}})", 4)).find("w.shape") !=
        std::string::npos);
}

TEST_CASE("opening a safetensors file that does not exist says not found") {
  scratch_dir dir;
  auto f = safetensors_file::open(dir / "nope.safetensors");
  REQUIRE(!f.ok());
  CHECK(f.error().code == errc::not_found);
}

TEST_CASE("a checkpoint split into shards with an index reads back every tensor") {
  scratch_dir dir;
  std::vector<std::vector<float>> data;
  std::vector<tensor_view> tensors;
  for (int i = 0; i < 5; ++i) data.push_back(std::vector<float>(16, static_cast<float>(i)));
  for (int i = 0; i < 5; ++i) tensors.push_back({"t" + std::to_string(i), dtype::f32, {4, 4}, as_bytes(data[i])});
  REQUIRE(write_checkpoint_weights(dir.path(), tensors, {.max_shard_bytes = 128}).ok());
  CHECK(std::filesystem::exists(dir / "model.safetensors.index.json"));
  CHECK(std::filesystem::exists(dir / "model-00001-of-00003.safetensors"));
  CHECK(std::filesystem::exists(dir / "model-00003-of-00003.safetensors"));
  CHECK(!std::filesystem::exists(dir / "model.safetensors"));
  auto index = nlohmann::json::parse(read_file(dir / "model.safetensors.index.json"));
  CHECK(index["metadata"]["total_size"] == 5 * 64);
  CHECK(index["weight_map"]["t4"] == "model-00003-of-00003.safetensors");

  auto weights = checkpoint_weights::open(dir.path());
  REQUIRE_MESSAGE(weights.ok(), crucible::error_text(weights));
  CHECK(weights->files().size() == 3);
  CHECK(weights->names() == std::vector<std::string>{"t0", "t1", "t2", "t3", "t4"});
  for (int i = 0; i < 5; ++i) {
    auto t = weights->get("t" + std::to_string(i));
    REQUIRE(t.ok());
    float first = 0;
    std::memcpy(&first, t->bytes.data(), 4);
    CHECK(first == static_cast<float>(i));
  }
  CHECK(weights->get("t9").error().code == errc::not_found);
}

TEST_CASE("a checkpoint that fits in one shard is written as model.safetensors") {
  scratch_dir dir;
  std::vector<float> w{1, 2};
  std::vector<tensor_view> tensors{{"w", dtype::f32, {2}, as_bytes(w)}};
  REQUIRE(write_checkpoint_weights(dir.path(), tensors).ok());
  CHECK(std::filesystem::exists(dir / "model.safetensors"));
  auto weights = checkpoint_weights::open(dir.path());
  REQUIRE(weights.ok());
  CHECK(weights->find("w") != nullptr);
}

TEST_CASE("a shard index naming a tensor its shard lacks is reported") {
  scratch_dir dir;
  std::vector<float> w{1, 2};
  std::vector<tensor_view> tensors{{"a", dtype::f32, {2}, as_bytes(w)}, {"b", dtype::f32, {2}, as_bytes(w)}};
  REQUIRE(write_checkpoint_weights(dir.path(), tensors, {.max_shard_bytes = 8}).ok());
  auto index = nlohmann::json::parse(read_file(dir / "model.safetensors.index.json"));
  index["weight_map"]["ghost"] = "model-00001-of-00002.safetensors";
  write_file(dir / "model.safetensors.index.json", index.dump());
  auto weights = checkpoint_weights::open(dir.path());
  REQUIRE(!weights.ok());
  CHECK(weights.error().message.find("weight_map.ghost") != std::string::npos);
  CHECK(weights.error().message.find("model.safetensors.index.json") != std::string::npos);
}

TEST_CASE("a shard index naming a missing shard file is reported") {
  scratch_dir dir;
  std::vector<float> w{1, 2};
  std::vector<tensor_view> tensors{{"a", dtype::f32, {2}, as_bytes(w)}, {"b", dtype::f32, {2}, as_bytes(w)}};
  REQUIRE(write_checkpoint_weights(dir.path(), tensors, {.max_shard_bytes = 8}).ok());
  std::filesystem::remove(dir / "model-00002-of-00002.safetensors");
  auto weights = checkpoint_weights::open(dir.path());
  REQUIRE(!weights.ok());
  CHECK(weights.error().code == errc::not_found);
  CHECK(weights.error().message.find("model-00002-of-00002.safetensors") != std::string::npos);
}

TEST_CASE("a tensor present in two shards is reported") {
  scratch_dir dir;
  std::vector<float> w{1, 2};
  std::vector<tensor_view> one{{"a", dtype::f32, {2}, as_bytes(w)}};
  std::vector<tensor_view> two{{"a", dtype::f32, {2}, as_bytes(w)}, {"b", dtype::f32, {2}, as_bytes(w)}};
  REQUIRE(write_safetensors(dir / "s1.safetensors", one).ok());
  REQUIRE(write_safetensors(dir / "s2.safetensors", two).ok());
  write_file(dir / "model.safetensors.index.json", R"({"weight_map": {"a": "s1.safetensors", "b": "s2.safetensors"}})");
  auto weights = checkpoint_weights::open(dir.path());
  REQUIRE(!weights.ok());
  CHECK(weights.error().message.find("tensor a is in two shards") != std::string::npos);
}

TEST_CASE("a checkpoint folder without weights is reported as not found") {
  scratch_dir dir;
  auto weights = checkpoint_weights::open(dir.path());
  REQUIRE(!weights.ok());
  CHECK(weights.error().code == errc::not_found);
}

}  // namespace
}  // namespace crucible::policy
