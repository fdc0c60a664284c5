// The learner's side of a publication (publication.hpp). After each version
// the policy's parameters become one safetensors file in host memory: each
// parameter is converted to the saved dtype (bf16 for a bf16 checkpoint,
// policy::saved_dtype) on the model's device into one flat buffer, which
// reaches the host in one copy (into pinned memory on CUDA) behind the
// header; the bytes are hashed once (weights_digest) and, when publish_dir
// is set, written once to publish_dir/v-N (with config.json and the
// tokenizer files) in the same pass as the hash. No file is read back.
//
// Owned by the learner actor (and learner_bench); one thread at a time. Keeps
// its buffers between versions: on CUDA one device copy of the weights in the
// saved dtype (1 GB for a 0.5B model in bf16) and the pinned host image.
// Under LoRA (adapters attached to the model) a publication is the adapters
// alone (megabytes), a PEFT folder publish_dir/v-N (adapter_config.json,
// adapter_model.safetensors); in chunks, the safetensors image carries the
// adapter_config.json text in its metadata under adapter_config_key.
//
// Torch-free header: LibTorch stays in weight_publisher.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "actors/learner/publication.hpp"
#include "runtime/base/result.hpp"

namespace crucible::policy {
class causal_lm;
}

namespace crucible::learner {

struct weight_publisher_options {
  // A folder on a shared file system: version v goes to publish_dir/v-N and
  // the publication names that path. Default "": in memory only, for chunks.
  std::string publish_dir;
  // Bytes per PolicyChunk in chunk mode (learner_options.publish_chunk_bytes);
  // default 4 MiB.
  std::uint64_t chunk_bytes = std::uint64_t{4} << 20;
  // A folder whose tokenizer files are copied into publish_dir/v-N (it must
  // hold tokenizer.json). Default "": none.
  std::string tokenizer_from;
  // base_model_name_or_path of a LoRA publication's adapter_config.json (the
  // learner's [learner] policy). Default "".
  std::string base_model;
};

// The safetensors metadata key of a LoRA publication's adapter_config.json.
inline constexpr const char* adapter_config_key = "crucible.adapter_config";

class weight_publisher {
 public:
  explicit weight_publisher(weight_publisher_options options);
  ~weight_publisher();
  weight_publisher(const weight_publisher&) = delete;
  weight_publisher& operator=(const weight_publisher&) = delete;

  // Publishes `model`'s current parameters as `version`: the publication
  // (path set with publish_dir, else chunks counted). internal for a LibTorch
  // failure (out of memory), invalid_argument for a dtype save_causal_lm
  // refuses, io when the folder cannot be written.
  result<publication> publish(const policy::causal_lm& model, std::uint64_t version);

  // The latest version's safetensors bytes; valid until the next publish.
  std::span<const std::uint8_t> bytes() const;

 private:
  struct buffers;
  weight_publisher_options options_;
  std::unique_ptr<buffers> buffers_;
};

}  // namespace crucible::learner
