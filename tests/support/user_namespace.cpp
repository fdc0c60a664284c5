#include "tests/support/user_namespace.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <sched.h>
#include <unistd.h>

namespace crucible::testing {

namespace {

bool write_proc(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  out.flush();
  return static_cast<bool>(out);
}

}  // namespace

bool enter_user_namespace(int more, const std::string& what, std::string& why) {
  const auto uid = ::geteuid();
  const auto gid = ::getegid();
  if (::unshare(CLONE_NEWUSER | more) != 0) {
    why = "unshare(" + what + "): " + std::strerror(errno) +
          (errno == EINVAL ? " (the process already runs threads: run this test case on its own)"
                           : " (the kernel does not allow unprivileged user namespaces here)");
    return false;
  }
  if (!write_proc("/proc/self/setgroups", "deny") ||
      !write_proc("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1") ||
      !write_proc("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1")) {
    why = "cannot write this process's uid_map or gid_map in its new user namespace";
    return false;
  }
  return true;
}

}  // namespace crucible::testing
