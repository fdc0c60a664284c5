// Writes a file through write(2), so that a failure names the path and the
// OS's reason ("/ckpt/step-9.tmp/optimizer.pt: cannot write: No space left
// on device"), which std::ofstream does not say. The file is created or
// truncated; parts are written one after another. On failure the partial
// file stays: callers write to a temporary name and remove it (or its
// folder). Callable from any thread. Header-only, torch-free.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>

#include "runtime/base/result.hpp"

namespace crucible {

inline status write_file(const std::filesystem::path& path, std::span<const std::string_view> parts) {
  auto failed = [&path](const char* what, int e) {
    return make_error(errc::io, path.string() + ": cannot " + what + ": " + std::strerror(e));
  };
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return failed("open for writing", errno);
  for (std::string_view part : parts) {
    while (!part.empty()) {
      const ssize_t n = ::write(fd, part.data(), part.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        const int e = n < 0 ? errno : EIO;
        ::close(fd);
        return failed("write", e);
      }
      part.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  if (::close(fd) != 0) return failed("write", errno);  // NFS and friends report ENOSPC here
  return status::success();
}

inline status write_file(const std::filesystem::path& path, std::string_view text) {
  return write_file(path, std::span<const std::string_view>(&text, 1));
}

}  // namespace crucible
