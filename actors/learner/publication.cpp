#include "actors/learner/publication.hpp"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <thread>

namespace crucible::learner {

namespace {

std::string hex_of(const unsigned char* md, unsigned int len) {
  std::string hex;
  char buf[3];
  for (unsigned int i = 0; i < len; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", md[i]);
    hex += buf;
  }
  return hex;
}

// How many digest blocks `size` bytes make (the last may be short).
std::uint64_t block_count(std::uint64_t size) { return (size + digest_block_bytes - 1) / digest_block_bytes; }

// One pass over `bytes` in blocks of digest_block_bytes on up to `threads`
// threads: block i hashed into digests[32 i..] when `digests` is not null and
// written at its offset to `fd` when fd >= 0. The first error's errno, or 0.
int block_pass(std::span<const std::uint8_t> bytes, unsigned char* digests, int fd, unsigned threads) {
  const std::uint64_t blocks = block_count(bytes.size());
  if (threads == 0) threads = std::min(16u, std::max(1u, std::thread::hardware_concurrency()));
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, std::max<std::uint64_t>(1, blocks)));
  std::atomic<std::uint64_t> next{0};
  std::atomic<int> failed{0};
  auto work = [&] {
    for (std::uint64_t b = next++; b < blocks && failed.load() == 0; b = next++) {
      const std::uint64_t begin = b * digest_block_bytes;
      const std::uint64_t size = std::min<std::uint64_t>(digest_block_bytes, bytes.size() - begin);
      if (digests) EVP_Digest(bytes.data() + begin, size, digests + 32 * b, nullptr, EVP_sha256(), nullptr);
      for (std::uint64_t done = 0; fd >= 0 && done < size;) {
        const ssize_t n = ::pwrite(fd, bytes.data() + begin + done, size - done, static_cast<off_t>(begin + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
          int expected = 0;
          failed.compare_exchange_strong(expected, n < 0 ? errno : EIO);
          break;
        }
        done += static_cast<std::uint64_t>(n);
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  return failed.load();
}

std::string digest_of_blocks(const std::vector<unsigned char>& digests) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(digests.data(), digests.size(), md, &len, EVP_sha256(), nullptr);
  return hex_of(md, len);
}

}  // namespace

std::string sha256_hex(std::span<const std::uint8_t> bytes) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(bytes.data(), bytes.size(), md, &len, EVP_sha256(), nullptr);
  return hex_of(md, len);
}


std::string weights_digest(std::span<const std::uint8_t> bytes, unsigned threads) {
  std::vector<unsigned char> digests(32 * block_count(bytes.size()));
  block_pass(bytes, digests.data(), -1, threads);
  return digest_of_blocks(digests);
}

result<std::string> write_weights(std::span<const std::uint8_t> bytes, const std::filesystem::path& file, bool digest,
                                  unsigned threads) {
  auto tmp = file;
  tmp += ".tmp";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return make_error(errc::io, tmp.string() + ": cannot open for writing: " + std::strerror(errno));
  int err = ::ftruncate(fd, static_cast<off_t>(bytes.size())) == 0 ? 0 : errno;
  std::vector<unsigned char> digests(digest ? 32 * block_count(bytes.size()) : 0);
  if (err == 0) err = block_pass(bytes, digest ? digests.data() : nullptr, fd, threads);
  if (::close(fd) != 0 && err == 0) err = errno;
  if (err == 0 && std::rename(tmp.c_str(), file.c_str()) != 0) err = errno;
  if (err != 0) {
    std::remove(tmp.c_str());
    return make_error(errc::io, file.string() + ": cannot write " + std::to_string(bytes.size()) + " bytes: " +
                                    std::strerror(err));
  }
  return digest ? digest_of_blocks(digests) : std::string();
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
  return describe_weights(version, weights.size(), weights_digest(weights), chunk_bytes);
}

publication describe_weights(std::uint64_t version, std::uint64_t total_bytes, std::string digest,
                             std::uint64_t chunk_bytes) {
  CRUCIBLE_CHECK(chunk_bytes > 0, "chunk_bytes must be positive");
  publication p;
  p.version = version;
  p.total_bytes = total_bytes;
  p.chunks = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, (total_bytes + chunk_bytes - 1) / chunk_bytes));
  p.sha256 = std::move(digest);
  return p;
}

std::span<const std::uint8_t> chunk_of(std::span<const std::uint8_t> weights, std::uint32_t index,
                                       std::uint64_t chunk_bytes) {
  const std::uint64_t begin = std::min<std::uint64_t>(weights.size(), index * chunk_bytes);
  const std::uint64_t end = std::min<std::uint64_t>(weights.size(), begin + chunk_bytes);
  return weights.subspan(begin, end - begin);
}

weight_assembler::weight_assembler(publication p) : p_(std::move(p)) {}

status weight_assembler::add(std::uint32_t index, std::span<const std::uint8_t> data) {
  const std::string where = "chunk " + std::to_string(index) + " of version " + std::to_string(p_.version);
  if (index >= p_.chunks)
    return make_error(errc::invalid_argument, where + ", which has " + std::to_string(p_.chunks) + " chunks");
  if (!have_.empty() && have_[index]) return status::success();
  const bool last = index + 1 == p_.chunks;
  if (chunk_bytes_ == 0) {
    // The first chunk in tells the size of all but the last.
    if (!last) chunk_bytes_ = data.size();
    else if (p_.chunks == 1) chunk_bytes_ = std::max<std::uint64_t>(1, p_.total_bytes);
    else if (data.size() <= p_.total_bytes && (p_.total_bytes - data.size()) % (p_.chunks - 1) == 0)
      chunk_bytes_ = (p_.total_bytes - data.size()) / (p_.chunks - 1);
    // Every chunk but the last is full: the last holds 1 to chunk_bytes_ bytes
    // (chunk_bytes_ * (chunks - 1) < total_bytes, tested without overflow).
    // Nothing to publish is one empty chunk: two chunks of nothing took
    // bytes and wrote them past the empty buffer (fuzz/regressions/policy_chunks).
    const bool fits =
        p_.total_bytes == 0
            ? p_.chunks == 1
            : chunk_bytes_ > 0 && (p_.chunks == 1 || chunk_bytes_ <= (p_.total_bytes - 1) / (p_.chunks - 1)) &&
                  p_.total_bytes - chunk_bytes_ * (p_.chunks - 1) <= chunk_bytes_;
    if (!fits) {
      chunk_bytes_ = 0;
      return make_error(errc::invalid_argument, where + ": " + std::to_string(data.size()) +
                                                    " bytes do not divide the announced " +
                                                    std::to_string(p_.total_bytes) + " into " +
                                                    std::to_string(p_.chunks) + " chunks");
    }
  }
  const std::uint64_t offset = index * chunk_bytes_;
  const std::uint64_t expected = last ? p_.total_bytes - offset : chunk_bytes_;
  if (data.size() != expected) {
    if (have_.empty()) chunk_bytes_ = 0;  // nothing held yet: the next chunk tells the size again
    return make_error(errc::invalid_argument, where + ": " + std::to_string(data.size()) + " bytes where " +
                                                  std::to_string(expected) + " were due");
  }
  // The buffer once a chunk agrees with the announcement, not before: a
  // 3-byte chunk of a publication announcing 1 TB in one chunk made it
  // allocate the terabyte (fuzz/regressions/policy_chunks).
  if (have_.empty()) {
    const auto memory = static_cast<std::uint64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    if (p_.total_bytes > memory) {
      chunk_bytes_ = 0;
      return make_error(errc::unavailable, "version " + std::to_string(p_.version) + " announces " +
                                               std::to_string(p_.total_bytes) + " bytes, more than the " +
                                               std::to_string(memory) + " bytes of memory here");
    }
    try {
      bytes_.resize(p_.total_bytes);
      have_.assign(p_.chunks, false);
    } catch (const std::exception&) {  // bad_alloc, length_error
      bytes_ = {};
      chunk_bytes_ = 0;
      return make_error(errc::unavailable, "version " + std::to_string(p_.version) + ": cannot hold the announced " +
                                               std::to_string(p_.total_bytes) + " bytes in memory");
    }
  }
  std::copy(data.begin(), data.end(), bytes_.begin() + static_cast<std::ptrdiff_t>(offset));
  have_[index] = true;
  ++received_;
  return status::success();
}

result<std::vector<std::uint8_t>> weight_assembler::finish() {
  if (!complete())
    return make_error(errc::unavailable, "version " + std::to_string(p_.version) + ": " +
                                             std::to_string(p_.chunks - received_) + " chunks missing");
  if (bytes_.size() != p_.total_bytes || weights_digest(bytes_) != p_.sha256)
    return make_error(errc::corrupt, "version " + std::to_string(p_.version) +
                                         ": reassembled weights do not match the published size and digest");
  return std::move(bytes_);
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
