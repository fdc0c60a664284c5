#include "actors/evaluator/containment.hpp"

#include <fcntl.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

namespace crucible::evaluator {
namespace {

// The Landlock ABI as the kernel has it (Debian 12's headers stop at ABI 1,
// so the structures and flags of the later ABIs are spelled out here).
struct ruleset_attr {
  std::uint64_t handled_access_fs;
  std::uint64_t handled_access_net;  // ABI 4
  std::uint64_t scoped;              // ABI 6
};
struct path_beneath_attr {
  std::uint64_t allowed_access;
  std::int32_t parent_fd;
} __attribute__((packed));

constexpr std::uint32_t create_ruleset_version = 1u << 0;
constexpr int rule_path_beneath = 1;
constexpr std::uint64_t fs_write_file = 1ull << 1, fs_remove_dir = 1ull << 4, fs_remove_file = 1ull << 5,
                        fs_make_char = 1ull << 6, fs_make_dir = 1ull << 7, fs_make_reg = 1ull << 8,
                        fs_make_sock = 1ull << 9, fs_make_fifo = 1ull << 10, fs_make_block = 1ull << 11,
                        fs_make_sym = 1ull << 12, fs_refer = 1ull << 13, fs_truncate = 1ull << 14;
constexpr std::uint64_t net_bind_tcp = 1ull << 0, net_connect_tcp = 1ull << 1;
constexpr std::uint64_t scope_signal = 1ull << 1;

long landlock_create_ruleset(const ruleset_attr* attr, std::size_t size, std::uint32_t flags) {
  return ::syscall(__NR_landlock_create_ruleset, attr, size, flags);
}
long landlock_add_rule(int fd, int type, const void* attr) {
  return ::syscall(__NR_landlock_add_rule, fd, type, attr, 0u);
}
long landlock_restrict_self(int fd) { return ::syscall(__NR_landlock_restrict_self, fd, 0u); }

std::uint64_t write_access(int abi) {
  std::uint64_t a = fs_write_file | fs_remove_dir | fs_remove_file | fs_make_char | fs_make_dir | fs_make_reg |
                    fs_make_sock | fs_make_fifo | fs_make_block | fs_make_sym;
  if (abi >= 2) a |= fs_refer;
  if (abi >= 3) a |= fs_truncate;
  return a;
}

int make_ruleset(const std::vector<std::string>& writable, int& abi_out) {
  const long abi = landlock_create_ruleset(nullptr, 0, create_ruleset_version);
  if (abi < 1) return -1;
  abi_out = static_cast<int>(abi);
  ruleset_attr attr{write_access(abi_out), abi >= 4 ? net_bind_tcp | net_connect_tcp : 0,
                    abi >= 6 ? scope_signal : 0};
  const std::size_t size = abi >= 6 ? sizeof(ruleset_attr) : abi >= 4 ? 16 : 8;
  const int low = static_cast<int>(landlock_create_ruleset(&attr, size, 0));
  if (low < 0) return -1;
  // Above the numbers the child dup2s its pipes and log onto (0..4).
  const int fd = ::fcntl(low, F_DUPFD_CLOEXEC, 10);
  ::close(low);
  if (fd < 0) return -1;
  auto allow = [&](const std::string& path, std::uint64_t access) {
    const int dir = ::open(path.c_str(), O_PATH | O_CLOEXEC);
    if (dir < 0) return;
    path_beneath_attr rule{access & attr.handled_access_fs, dir};
    landlock_add_rule(fd, rule_path_beneath, &rule);
    ::close(dir);
  };
  for (const auto& w : writable) allow(w, attr.handled_access_fs);
  // Device nodes that exist (the GPU's, /dev/null) may be opened for writing.
  allow("/dev", fs_write_file | (abi_out >= 3 ? fs_truncate : 0));
  return fd;
}

std::vector<sock_filter> make_filter() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (!ctx) return {};
  bool ok = true;
  for (int family : {AF_INET, AF_INET6, AF_PACKET})
    ok &= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EACCES), SCMP_SYS(socket), 1, SCMP_A0(SCMP_CMP_EQ, family)) == 0;
  for (int nr : {SCMP_SYS(ptrace), SCMP_SYS(process_vm_readv), SCMP_SYS(process_vm_writev), SCMP_SYS(pidfd_getfd),
                 SCMP_SYS(io_uring_setup)})
    ok &= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0) == 0;
  std::vector<sock_filter> out;
  const int mem = ::memfd_create("crucible-seccomp", MFD_CLOEXEC);
  if (ok && mem >= 0 && seccomp_export_bpf(ctx, mem) == 0) {
    const off_t bytes = ::lseek(mem, 0, SEEK_END);
    out.resize(static_cast<std::size_t>(bytes) / sizeof(sock_filter));
    if (::pread(mem, out.data(), out.size() * sizeof(sock_filter), 0) != static_cast<ssize_t>(bytes)) out.clear();
  }
  if (mem >= 0) ::close(mem);
  seccomp_release(ctx);
  return out;
}

}  // namespace

containment::containment(containment&& o) noexcept
    : ruleset_fd(o.ruleset_fd), landlock_abi(o.landlock_abi), filter(std::move(o.filter)) {
  o.ruleset_fd = -1;
}

containment::~containment() {
  if (ruleset_fd >= 0) ::close(ruleset_fd);
}

containment prepare_containment(const std::vector<std::string>& writable) {
  containment c;
  c.ruleset_fd = make_ruleset(writable, c.landlock_abi);
  c.filter = make_filter();
  return c;
}

std::uint32_t apply_containment(const containment& c) {
  std::uint32_t held = 0;
  ::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
  if (c.ruleset_fd >= 0) {
    // The process's own /proc entry, opened here so that it is the child's:
    // the NVIDIA driver writes there while it initialises (without it
    // cudaGetDeviceCount fails with error 304 on the H200 hosts).
    const int self = ::open("/proc/self", O_PATH | O_CLOEXEC);
    if (self >= 0) {
      path_beneath_attr rule{(fs_write_file | (c.landlock_abi >= 3 ? fs_truncate : 0)), self};
      landlock_add_rule(c.ruleset_fd, rule_path_beneath, &rule);
      ::close(self);
    }
  }
  if (c.ruleset_fd >= 0 && landlock_restrict_self(c.ruleset_fd) == 0) {
    held |= held_landlock_fs;
    if (c.landlock_abi >= 4) held |= held_landlock_tcp;
    if (c.landlock_abi >= 6) held |= held_landlock_signals;
  }
  if (!c.filter.empty()) {
    sock_fprog prog{static_cast<unsigned short>(c.filter.size()), const_cast<sock_filter*>(c.filter.data())};
    if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0) held |= held_seccomp;
  }
  return held;
}

std::vector<std::string> containment_report(std::uint32_t held) {
  std::vector<std::string> out;
  if (held & held_landlock_fs) out.push_back("landlock-fs");
  if (held & held_landlock_tcp) out.push_back("landlock-tcp");
  if (held & held_landlock_signals) out.push_back("landlock-signals");
  if (held & held_seccomp) out.push_back("seccomp");
  return out;
}

}  // namespace crucible::evaluator
