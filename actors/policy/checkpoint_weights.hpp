// The weights of a Hugging Face checkpoint folder: either one
// model.safetensors, or shards listed by model.safetensors.index.json
// ({"metadata": {...}, "weight_map": {tensor name: shard file}}). The LibTorch
// model reads its parameters from here and saves them back through
// write_checkpoint_weights.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "actors/policy/safetensors.hpp"
#include "runtime/base/result.hpp"

namespace crucible::policy {

// Every tensor of a checkpoint folder, memory-mapped. Views stay valid while
// this object (or a copy) lives. Thread-safe to read.
class checkpoint_weights {
 public:
  // Opens `dir`/model.safetensors.index.json when present, else
  // `dir`/model.safetensors. not_found when neither exists; corrupt (naming
  // the file and field) for a bad index, a shard missing a tensor the index
  // lists, a tensor present in two shards, or any error of
  // safetensors_file::open.
  static result<checkpoint_weights> open(const std::filesystem::path& dir);

  // The tensor called `name`, or nullptr.
  const tensor_view* find(std::string_view name) const;
  // The tensor called `name`; not_found naming the folder when absent.
  result<tensor_view> get(std::string_view name) const;
  // Every tensor name, sorted.
  std::vector<std::string> names() const;
  const std::vector<safetensors_file>& files() const { return files_; }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  std::filesystem::path dir_;
  std::vector<safetensors_file> files_;
  std::map<std::string, std::size_t, std::less<>> file_of_;  // tensor name -> index in files_
};

// Options for write_checkpoint_weights.
struct checkpoint_write_options {
  // Largest shard in bytes of tensor data (default 5 GB, as transformers'
  // save_pretrained); one file named model.safetensors when all fits in one.
  std::uint64_t max_shard_bytes = 5'000'000'000;
  // Written as each file's __metadata__ (default {"format": "pt"}).
  std::map<std::string, std::string> metadata = {{"format", "pt"}};
};

// Writes `tensors` into `dir` as transformers does: model.safetensors, or
// model-0000i-of-0000n.safetensors shards (filled in name order) plus
// model.safetensors.index.json with metadata.total_size and weight_map.
// invalid_argument or io as write_safetensors.
status write_checkpoint_weights(const std::filesystem::path& dir, std::span<const tensor_view> tensors,
                                const checkpoint_write_options& options = {});

}  // namespace crucible::policy
