// Native-code containment for sandbox workers that needs no privilege
// (issue 17): what a candidate's compiled extension may do is bounded by
// the kernel, not by the worker's Python audit hook, on a GPU node (where
// the NVIDIA driver rules out the user namespace) as on CPU.
//
// - Landlock (file system): writes (create, write, truncate, remove,
//   rename into) only under the writable directories (scratch, and for a
//   compile the cache entry); opening existing device nodes under /dev for
//   writing stays allowed (the GPU's /dev/nvidia*, /dev/null), creating
//   files there does not, and so does writing the worker's own /proc entry
//   (the NVIDIA driver does; tools/gpu/landlock_probe.py found which).
//   Reading and executing are not restricted.
// - Landlock (network, ABI 4, Linux 6.7): no TCP bind or connect.
// - Landlock (scope, ABI 6, Linux 6.12): no signals to processes outside
//   the worker's own domain (its own group stays reachable).
// - seccomp (libseccomp): socket() of AF_INET, AF_INET6 and AF_PACKET,
//   ptrace, process_vm_readv/writev, pidfd_getfd and io_uring_setup fail
//   with EACCES/EPERM. AF_UNIX stays (the protocol socket is one).
//
// What held is reported per evaluation in `sandbox` ("landlock-fs",
// "landlock-tcp", "landlock-signals", "seccomp"); a kernel without Landlock
// leaves the seccomp filter and the rest of the sandbox.
//
// Who calls it: sandbox.cpp. prepare() runs in the parent before fork
// (it allocates); apply() in the child between fork and exec, with
// async-signal-safe calls only.
#pragma once

#include <linux/filter.h>

#include <cstdint>
#include <string>
#include <vector>

namespace crucible::evaluator {

struct containment {
  int ruleset_fd = -1;                 // Landlock ruleset, -1 where Landlock is absent
  int landlock_abi = 0;
  std::vector<sock_filter> filter;     // the seccomp program, empty if it could not be built
  containment() = default;
  containment(containment&& o) noexcept;
  containment& operator=(containment&&) = delete;
  containment(const containment&) = delete;
  ~containment();
};

// The rules for these writable directories.
containment prepare_containment(const std::vector<std::string>& writable);

// Bits of what held in the child (containment_report names them).
constexpr std::uint32_t held_landlock_fs = 1, held_landlock_tcp = 2, held_landlock_signals = 4, held_seccomp = 8;

// In the child: no_new_privs, Landlock, then seccomp. Returns the held bits.
std::uint32_t apply_containment(const containment& c);

std::vector<std::string> containment_report(std::uint32_t held);

}  // namespace crucible::evaluator
