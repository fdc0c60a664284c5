// safetensors: the checkpoint format of Hugging Face (an 8-byte little-endian
// header length, a JSON header naming each tensor's dtype, shape and byte
// range, then the raw tensor bytes). Reading maps the file into memory and
// hands out views; writing produces files that the `safetensors` Python
// library and transformers load. See checkpoint_weights.hpp for folders with
// shards.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::policy {

// Element types, named as safetensors names them ("F32", "BF16", ...).
enum class dtype : std::uint8_t { f64, f32, f16, bf16, i64, i32, i16, i8, u8, boolean };

std::string_view to_string(dtype type);  // "F32", "BF16", ...
std::size_t dtype_size(dtype type);      // bytes per element
// "F32" -> dtype::f32; invalid_argument for a name safetensors does not know.
result<dtype> parse_dtype(std::string_view name);

// One tensor: its name, element type, shape and raw little-endian bytes.
// Reading: `bytes` points into the memory map of the file it came from and is
// valid while that safetensors_file (or a copy of it) lives; the LibTorch side
// wraps it with torch::from_blob (const data: clone before writing to it).
// Writing: the caller owns `bytes` for the duration of the write.
struct tensor_view {
  std::string name;
  dtype type = dtype::f32;
  std::vector<std::int64_t> shape;
  std::span<const std::byte> bytes;

  std::int64_t numel() const;
  std::string text() const;  // "model.norm.weight F32 [64]"
};

// A memory-mapped .safetensors file, validated on open. Cheap to copy (the
// mapping is shared and unmapped when the last copy goes). Thread-safe to read.
class safetensors_file {
 public:
  // Maps `path` and checks the header: corrupt (naming the file and the
  // field) for a truncated file, a header length past the end, bad JSON, an
  // unknown dtype, a shape that does not match the byte range, offsets out of
  // range, overlapping or leaving gaps; io when the file cannot be opened.
  static result<safetensors_file> open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return path_; }
  // Tensors in the order of their data offsets.
  const std::vector<tensor_view>& tensors() const { return tensors_; }
  // The tensor called `name`, or nullptr.
  const tensor_view* find(std::string_view name) const;
  // The header's "__metadata__" (string to string), empty when absent.
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

 private:
  struct mapping;
  std::filesystem::path path_;
  std::shared_ptr<const mapping> map_;
  std::vector<tensor_view> tensors_;
  std::map<std::string, std::size_t, std::less<>> index_;
  std::map<std::string, std::string> metadata_;
};

// Where write_safetensors puts each tensor: `header` is the file's first
// bytes (the 8-byte length and the padded JSON), offsets[i] where tensors[i]'s
// data starts in the file, total_bytes the file's size. The learner fills a
// buffer of total_bytes this way (its publication) without write_safetensors.
struct safetensors_layout {
  std::string header;
  std::vector<std::uint64_t> offsets;
  std::uint64_t total_bytes = 0;
};

// The layout of `tensors` (their names, types and shapes; `bytes` is not
// read) under write_safetensors' rules. invalid_argument for duplicate or
// reserved names or a shape too large, naming `what` (a file, or "weights").
result<safetensors_layout> plan_safetensors(std::span<const tensor_view> tensors,
                                            const std::map<std::string, std::string>& metadata = {{"format", "pt"}},
                                            std::string_view what = "weights");

// Writes `tensors` to `path` in the safetensors format: sorted keys, header
// padded with spaces to a multiple of 8 bytes, data laid out by element size
// (largest first, so every tensor stays aligned) then name, and `metadata` as
// "__metadata__" (Hugging Face expects {"format": "pt"}). invalid_argument for
// duplicate names or a byte count that does not match the shape; io when the
// file cannot be written. Writes to a temporary name and renames.
status write_safetensors(const std::filesystem::path& path, std::span<const tensor_view> tensors,
                         const std::map<std::string, std::string>& metadata = {{"format", "pt"}});

}  // namespace crucible::policy
