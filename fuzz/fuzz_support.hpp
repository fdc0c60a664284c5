// What several fuzzers share: splitting one input into several messages,
// and a file in memory for the parsers that take a path. Test code only:
// nothing here is part of a parser.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

namespace crucible::fuzz {

// An input read as messages: each a little-endian u32 length then that many
// bytes; a length past the end takes what is left. make_seeds.cpp writes
// seeds this way (join_parts).
inline std::vector<std::span<const std::uint8_t>> split_parts(std::span<const std::uint8_t> in,
                                                              std::size_t max_parts = 64) {
  std::vector<std::span<const std::uint8_t>> parts;
  std::size_t at = 0;
  while (at + 4 <= in.size() && parts.size() < max_parts) {
    std::size_t n = in[at] | (in[at + 1] << 8) | (in[at + 2] << 16) | (std::size_t(in[at + 3]) << 24);
    at += 4;
    n = std::min(n, in.size() - at);
    parts.push_back(in.subspan(at, n));
    at += n;
  }
  return parts;
}

inline std::vector<std::uint8_t> join_parts(const std::vector<std::vector<std::uint8_t>>& parts) {
  std::vector<std::uint8_t> out;
  for (const auto& p : parts) {
    auto n = static_cast<std::uint32_t>(p.size());
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<std::uint8_t>(n >> (8 * i)));
    out.insert(out.end(), p.begin(), p.end());
  }
  return out;
}

// A memfd whose bytes are set per input; path() ("/proc/self/fd/N") opens,
// maps and streams like a regular file, with no disk under it.
class memory_file {
 public:
  memory_file() : fd_(::memfd_create("crucible-fuzz", MFD_CLOEXEC)) {
    if (fd_ < 0) std::abort();
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  void set(const std::uint8_t* data, std::size_t size) {
    if (::ftruncate(fd_, 0) != 0) std::abort();
    std::size_t done = 0;
    while (done < size) {
      auto n = ::pwrite(fd_, data + done, size - done, static_cast<off_t>(done));
      if (n <= 0) std::abort();
      done += static_cast<std::size_t>(n);
    }
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

}  // namespace crucible::fuzz
