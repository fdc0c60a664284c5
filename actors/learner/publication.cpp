#include "actors/learner/publication.hpp"

#include <openssl/evp.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace crucible::learner {

std::string sha256_hex(std::span<const std::uint8_t> bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", md[i]);
    hex += buf;
  }
  return hex;
}

std::string publication::text() const {
  std::ostringstream s;
  s << "version " << version << ": " << total_bytes << " bytes ";
  if (path.empty()) s << "in " << chunks << " chunks";
  else s << "at " << path;
  s << ", sha256 " << sha256.substr(0, 12);
  return s.str();
}

publication describe_weights(std::uint64_t version, std::span<const std::uint8_t> weights, std::uint64_t chunk_bytes) {
  CRUCIBLE_CHECK(chunk_bytes > 0, "chunk_bytes must be positive");
  publication p;
  p.version = version;
  p.total_bytes = weights.size();
  p.chunks = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (weights.size() + chunk_bytes - 1) / chunk_bytes));
  p.sha256 = sha256_hex(weights);
  return p;
}

std::span<const std::uint8_t> chunk_of(std::span<const std::uint8_t> weights, std::uint32_t index,
                                       std::uint64_t chunk_bytes) {
  const std::uint64_t begin = std::min<std::uint64_t>(weights.size(), index * chunk_bytes);
  const std::uint64_t end = std::min<std::uint64_t>(weights.size(), begin + chunk_bytes);
  return weights.subspan(begin, end - begin);
}

weight_assembler::weight_assembler(publication p) : p_(std::move(p)), parts_(p_.chunks), have_(p_.chunks, false) {}

status weight_assembler::add(std::uint32_t index, std::span<const std::uint8_t> data) {
  if (index >= p_.chunks)
    return make_error(errc::invalid_argument, "chunk " + std::to_string(index) + " of version " +
                                                  std::to_string(p_.version) + ", which has " +
                                                  std::to_string(p_.chunks) + " chunks");
  if (have_[index]) return status::success();
  parts_[index].assign(data.begin(), data.end());
  have_[index] = true;
  ++received_;
  return status::success();
}

result<std::vector<std::uint8_t>> weight_assembler::finish() const {
  if (!complete())
    return make_error(errc::unavailable, "version " + std::to_string(p_.version) + ": " +
                                             std::to_string(p_.chunks - received_) + " chunks missing");
  std::vector<std::uint8_t> out;
  out.reserve(p_.total_bytes);
  for (const auto& part : parts_) out.insert(out.end(), part.begin(), part.end());
  if (out.size() != p_.total_bytes || sha256_hex(out) != p_.sha256)
    return make_error(errc::corrupt, "version " + std::to_string(p_.version) +
                                         ": reassembled weights do not match the published size and sha256");
  return out;
}

flatbuffers::Offset<msg::PolicyPublication> build_publication(flatbuffers::FlatBufferBuilder& fbb, const publication& p) {
  return msg::CreatePolicyPublication(fbb, p.version, fbb.CreateString(p.path), p.total_bytes, p.chunks,
                                      fbb.CreateString(p.sha256));
}

publication publication_from(const msg::PolicyPublication& wire) {
  publication p;
  p.version = wire.version();
  p.path = std::string(messages::str(wire.path()));
  p.total_bytes = wire.total_bytes();
  p.chunks = wire.chunks();
  p.sha256 = std::string(messages::str(wire.sha256()));
  return p;
}

flatbuffers::Offset<msg::PolicyChunk> build_chunk(flatbuffers::FlatBufferBuilder& fbb, std::uint64_t version,
                                                  std::uint32_t index, std::span<const std::uint8_t> data) {
  return msg::CreatePolicyChunk(fbb, version, index, fbb.CreateVector(data.data(), data.size()));
}

}  // namespace crucible::learner
