// Versioned weight publication. The learner writes version v as one
// safetensors file and announces it with a PolicyPublication (version, size,
// sha256, and either a shared path or a number of chunks); rollouts fetch the
// chunks (PolicyChunk, publish_chunk_bytes each), reassemble them with
// weight_assembler, which checks the sha256, and switch to the new weights
// between groups. Torch-free; used by the learner role and the rollout.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "messages/codec.hpp"
#include "runtime/base/result.hpp"

namespace crucible::learner {

// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::span<const std::uint8_t> bytes);

struct publication {
  std::uint64_t version = 0;
  std::string path;             // a folder on a shared file system; empty when sent as chunks
  std::uint64_t total_bytes = 0;
  std::uint32_t chunks = 0;     // 0 with a path
  std::string sha256;           // of the safetensors bytes
  std::string text() const;     // "version 3: 1.2 MB in 1 chunk, sha256 ab12..."
};

// Describes `weights` (the bytes of a safetensors file) as version `version`
// cut into chunks of `chunk_bytes` (at least one chunk, even when empty).
publication describe_weights(std::uint64_t version, std::span<const std::uint8_t> weights, std::uint64_t chunk_bytes);
// Chunk `index` of `weights` under `p`'s chunking.
std::span<const std::uint8_t> chunk_of(std::span<const std::uint8_t> weights, std::uint32_t index,
                                       std::uint64_t chunk_bytes);

// Collects the chunks of one publication in any order, repeats allowed.
class weight_assembler {
 public:
  explicit weight_assembler(publication p);
  // invalid_argument for an index past the count; a repeated chunk is
  // ignored (finish() checks sizes and the hash).
  status add(std::uint32_t index, std::span<const std::uint8_t> data);
  bool complete() const { return received_ == p_.chunks; }
  // The weights; unavailable while chunks are missing, corrupt when the sha256
  // or the size disagrees with the publication.
  result<std::vector<std::uint8_t>> finish() const;
  const publication& announced() const { return p_; }

 private:
  publication p_;
  std::vector<std::vector<std::uint8_t>> parts_;
  std::vector<bool> have_;
  std::uint32_t received_ = 0;
};

flatbuffers::Offset<msg::PolicyPublication> build_publication(flatbuffers::FlatBufferBuilder& fbb, const publication& p);
publication publication_from(const msg::PolicyPublication& wire);
flatbuffers::Offset<msg::PolicyChunk> build_chunk(flatbuffers::FlatBufferBuilder& fbb, std::uint64_t version,
                                                  std::uint32_t index, std::span<const std::uint8_t> data);

}  // namespace crucible::learner
