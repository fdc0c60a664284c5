// Versioned weight publication. The learner serialises version v as one
// safetensors file in memory (weight_publisher.hpp), hashes it once
// (weights_digest) and announces it with a PolicyPublication (version, size,
// digest, and either a shared path or a number of chunks); rollouts fetch the
// chunks (PolicyChunk, publish_chunk_bytes each), reassemble them with
// weight_assembler, which checks the digest (once), and switch to the new
// weights between groups. A rollout given a path trusts the file the
// learner hashed and loads it without hashing again. Torch-free; used by the
// learner role and the rollout.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

#include "messages/codec.hpp"
#include "runtime/base/result.hpp"

namespace crucible::learner {

// Lower-case hex SHA-256 of `bytes`.
std::string sha256_hex(std::span<const std::uint8_t> bytes);

// Block size of weights_digest: 4 MiB.
inline constexpr std::uint64_t digest_block_bytes = std::uint64_t{4} << 20;

// The digest a publication carries in its sha256 field: the lower-case hex
// SHA-256 of the concatenated 32-byte SHA-256 digests of `bytes`' consecutive
// blocks of digest_block_bytes (the last one shorter; none for no bytes, which
// gives the SHA-256 of nothing). Unlike one SHA-256 over the whole, the
// blocks are hashed on up to `threads` threads at once (0: one per core, at
// most 16): 1 GB of weights in tens of milliseconds instead of about half a
// second. The result does not depend on `threads`. Any thread may call it.
std::string weights_digest(std::span<const std::uint8_t> bytes, unsigned threads = 0);

// Writes `bytes` to `file` on up to `threads` threads (each writes whole
// blocks at their offsets), through file + ".tmp" renamed at the end, and
// when `digest` is true hashes them in the same pass: the returned string is
// weights_digest(bytes), or empty when not asked for. io naming the file when
// it cannot be written.
result<std::string> write_weights(std::span<const std::uint8_t> bytes, const std::filesystem::path& file,
                                  bool digest, unsigned threads = 0);

struct publication {
  std::uint64_t version = 0;
  std::string path;             // a folder on a shared file system; empty when sent as chunks
  std::uint64_t total_bytes = 0;
  std::uint32_t chunks = 0;     // 0 with a path
  std::string sha256;           // weights_digest of the safetensors bytes
  std::string text() const;     // "version 3: 1.2 MB in 1 chunk, sha256 ab12..."
};

// Describes `weights` (the bytes of a safetensors file) as version `version`
// cut into chunks of `chunk_bytes` (at least one chunk, even when empty),
// hashing them (weights_digest).
publication describe_weights(std::uint64_t version, std::span<const std::uint8_t> weights, std::uint64_t chunk_bytes);
// The same for weights already hashed: `digest` is their weights_digest.
publication describe_weights(std::uint64_t version, std::uint64_t total_bytes, std::string digest,
                             std::uint64_t chunk_bytes);
// Chunk `index` of `weights` under `p`'s chunking.
std::span<const std::uint8_t> chunk_of(std::span<const std::uint8_t> weights, std::uint32_t index,
                                       std::uint64_t chunk_bytes);

// Collects the chunks of one publication in any order, repeats allowed,
// straight into one buffer of total_bytes (every chunk but the last has the
// same size, which the first chunk to arrive tells).
class weight_assembler {
 public:
  explicit weight_assembler(publication p);
  // invalid_argument for an index past the count or a chunk whose size
  // disagrees with the others' and the total; a repeated chunk is ignored
  // (finish() checks the hash). The buffer of total_bytes is allocated when
  // the first chunk that agrees with the announcement arrives: unavailable
  // when it is more than this machine's memory or cannot be allocated.
  status add(std::uint32_t index, std::span<const std::uint8_t> data);
  bool complete() const { return received_ == p_.chunks; }
  // The weights, hashed once (weights_digest), handed over: a second call
  // after a successful one finds nothing. unavailable while chunks are
  // missing, corrupt when the digest disagrees with the publication.
  result<std::vector<std::uint8_t>> finish();
  const publication& announced() const { return p_; }

 private:
  publication p_;
  std::vector<std::uint8_t> bytes_;  // total_bytes once the first chunk is in
  std::uint64_t chunk_bytes_ = 0;    // size of every chunk but the last; 0 until known
  std::vector<bool> have_;           // chunks received; sized with bytes_
  std::uint32_t received_ = 0;
};

flatbuffers::Offset<msg::PolicyPublication> build_publication(flatbuffers::FlatBufferBuilder& fbb, const publication& p);
publication publication_from(const msg::PolicyPublication& wire);
flatbuffers::Offset<msg::PolicyChunk> build_chunk(flatbuffers::FlatBufferBuilder& fbb, std::uint64_t version,
                                                  std::uint32_t index, std::span<const std::uint8_t> data);

}  // namespace crucible::learner
