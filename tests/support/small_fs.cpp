#include "tests/support/small_fs.hpp"

#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "tests/support/process.hpp"
#include "tests/support/user_namespace.hpp"

namespace crucible::testing {

namespace {

std::string& reason() {
  static std::string r;
  return r;
}

// Enters a user namespace where this process is root, and a mount namespace
// of its own; once per process.
bool enter_namespace() {
  static int state = 0;  // 0: not tried, 1: in, -1: refused
  if (state) return state > 0;
  state = -1;
  if (!enter_user_namespace(CLONE_NEWNS, "CLONE_NEWUSER | CLONE_NEWNS", reason())) return false;
  // Mounts made here stay here.
  if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) {
    reason() = std::string("cannot make / private in the new mount namespace: ") + std::strerror(errno);
    return false;
  }
  state = 1;
  return true;
}

std::string ballast(const std::string& dir) { return dir + "/.ballast"; }

}  // namespace

const std::string& small_fs::why() { return reason(); }

std::unique_ptr<small_fs> small_fs::make(const std::string& name, std::size_t bytes) {
  if (!enter_namespace()) return nullptr;
  auto dir = temp_dir(name);
  auto options = "size=" + std::to_string(bytes) + ",mode=0755";
  if (::mount("tmpfs", dir.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    reason() = "mount -t tmpfs -o " + options + " " + dir + ": " + std::strerror(errno);
    return nullptr;
  }
  return std::unique_ptr<small_fs>(new small_fs(dir));
}

small_fs::~small_fs() {
  ::umount2(path_.c_str(), MNT_DETACH);
  ::rmdir(path_.c_str());  // the mount point, empty once the tmpfs is gone (temp_dirs.cpp may have run already)
}

void small_fs::fill() {
  int fd = ::open(ballast(path_).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  std::vector<char> chunk(1 << 20, 'b');
  for (std::size_t size = chunk.size(); size >= 1;) {
    ssize_t n = ::write(fd, chunk.data(), size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) size /= 2;  // ENOSPC: try smaller, down to one byte
  }
  ::close(fd);
}

void small_fs::release() { ::unlink(ballast(path_).c_str()); }

std::size_t small_fs::free_bytes() const {
  struct statvfs s {};
  if (::statvfs(path_.c_str(), &s) != 0) return 0;
  return static_cast<std::size_t>(s.f_bavail) * s.f_frsize;
}

}  // namespace crucible::testing
