#include "storage/segment_store.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <system_error>

#include <fcntl.h>
#include <unistd.h>

namespace crucible::storage {
namespace {

error io_error(const std::string& path, std::string_view what, int err) {
  return make_error(errc::io, std::string(what) + " " + path + ": " + std::strerror(err));
}

class file_segments final : public segment_store {
 public:
  explicit file_segments(std::string dir) : dir_(std::move(dir)) {}
  ~file_segments() override { close_current(); }

  result<std::vector<std::uint64_t>> list() override {
    std::vector<std::uint64_t> found;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(dir_, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec)) {
      auto name = it->path().filename().string();
      if (name.size() != 24 || name.substr(20) != ".log") continue;
      if (name.find_first_not_of("0123456789") != 20) continue;
      found.push_back(std::stoull(name.substr(0, 20)));
    }
    if (ec) return make_error(errc::io, "cannot list " + dir_ + ": " + ec.message());
    std::sort(found.begin(), found.end());
    return found;
  }

  result<std::string> read(std::uint64_t segment) override {
    auto path = path_of(segment);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return io_error(path, "cannot open", errno);
    std::string out;
    char buf[1 << 16];
    for (;;) {
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        int err = errno;
        ::close(fd);
        return io_error(path, "cannot read", err);
      }
      if (n == 0) break;
      out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
  }

  result<std::string> read(std::uint64_t segment, std::uint64_t offset, std::uint64_t size) override {
    auto path = path_of(segment);
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return io_error(path, "cannot open", errno);
    std::string out(size, '\0');
    std::size_t got = 0;
    while (got < size) {
      ssize_t n = ::pread(fd, out.data() + got, size - got, static_cast<off_t>(offset + got));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        int err = n < 0 ? errno : EIO;
        ::close(fd);
        return io_error(path, "short read of", err);
      }
      got += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return out;
  }

  status append(std::uint64_t segment, std::string_view bytes) override {
    if (fd_ < 0 || segment != current_) {
      close_current();
      auto path = path_of(segment);
      fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
      if (fd_ < 0) return io_error(path, "cannot open", errno);
      off_t end = ::lseek(fd_, 0, SEEK_END);
      if (end < 0) {
        int err = errno;
        close_current();
        return io_error(path, "cannot seek in", err);
      }
      current_ = segment;
      size_ = end;
      created_unsynced_ = true;
    }
    const char* p = bytes.data();
    std::size_t left = bytes.size();
    while (left > 0) {
      ssize_t n = ::write(fd_, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return cut_back(segment, errno);
      p += n;
      left -= static_cast<std::size_t>(n);
    }
    size_ += static_cast<off_t>(bytes.size());
    return {};
  }

  status sync(std::uint64_t segment) override {
    if (fd_ >= 0 && segment == current_) {
      if (::fdatasync(fd_) != 0) return io_error(path_of(segment), "cannot sync", errno);
      if (created_unsynced_) {
        int dfd = ::open(dir_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0) return io_error(dir_, "cannot open", errno);
        int rc = ::fsync(dfd);
        int err = errno;
        ::close(dfd);
        if (rc != 0) return io_error(dir_, "cannot sync", err);
        created_unsynced_ = false;
      }
    }
    return {};
  }

  status remove(std::uint64_t segment) override {
    if (segment == current_) close_current();
    auto path = path_of(segment);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return io_error(path, "cannot remove", errno);
    return {};
  }

  std::string describe() const override { return "segments:" + dir_; }

 private:
  std::string path_of(std::uint64_t segment) const {
    char name[32];
    std::snprintf(name, sizeof name, "%020llu.log", static_cast<unsigned long long>(segment));
    return dir_ + "/" + name;
  }
  // A write failed after part of an append may have reached the file: cut
  // the file back to its size before the append, so that the segment stays
  // whole (truncating needs no free space).
  status cut_back(std::uint64_t segment, int write_errno) {
    auto path = path_of(segment);
    auto e = io_error(path, "cannot write", write_errno);
    if (::ftruncate(fd_, size_) == 0) return e;
    int err = errno;
    close_current();
    return make_error(errc::corrupt, e.message + "; and cannot cut it back to " + std::to_string(size_) +
                                         " bytes: " + std::strerror(err) + " (a torn record stays)");
  }
  void close_current() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

  std::string dir_;
  int fd_ = -1;               // open for appending to current_
  std::uint64_t current_ = 0;
  off_t size_ = 0;            // of current_, as far as appends succeeded
  bool created_unsynced_ = false;
};

}  // namespace

result<std::unique_ptr<segment_store>> open_file_segments(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return make_error(errc::io, "cannot create " + dir + ": " + ec.message());
  return std::unique_ptr<segment_store>(std::make_unique<file_segments>(dir));
}

result<std::vector<std::uint64_t>> memory_segments::list() {
  std::vector<std::uint64_t> out;
  for (auto& [n, s] : segments_) out.push_back(n);
  return out;
}

result<std::string> memory_segments::read(std::uint64_t segment) {
  auto it = segments_.find(segment);
  if (it == segments_.end()) return make_error(errc::not_found, "no segment " + std::to_string(segment));
  return it->second;
}

result<std::string> memory_segments::read(std::uint64_t segment, std::uint64_t offset, std::uint64_t size) {
  auto it = segments_.find(segment);
  if (it == segments_.end() || offset + size > it->second.size())
    return make_error(errc::io, "short read of segment " + std::to_string(segment));
  return it->second.substr(offset, size);
}

status memory_segments::append(std::uint64_t segment, std::string_view bytes) {
  if (fail_next_ > 0) {
    --fail_next_;
    segments_[segment].append(bytes.substr(0, bytes.size() / 2));
    return make_error(errc::corrupt, "injected torn append on segment " + std::to_string(segment));
  }
  segments_[segment].append(bytes);
  appended_ += bytes.size();
  return {};
}

status memory_segments::remove(std::uint64_t segment) {
  segments_.erase(segment);
  return {};
}

std::size_t memory_segments::bytes() const {
  std::size_t n = 0;
  for (auto& [k, s] : segments_) n += s.size();
  return n;
}

}  // namespace crucible::storage
