// A sandboxed child process that speaks length-prefixed frames over a
// socket (fd 3 for requests, fd 4 for replies in the child; both are the same
// socket). Used by the worker session (one evaluation) and the compile cache
// (one compile). Owned by one thread at a time; not thread-safe.
//
// What is enforced, without root:
//   - its own process group; SIGKILL of the whole group at a deadline, on
//     destruction and after any failure (no process outlives its sandbox);
//   - rlimits: address space, processes (not enforced for uid 0 by the
//     kernel), open files, CPU seconds, file size, no core dumps;
//   - CPU affinity to a core set (sched_setaffinity);
//   - cwd, HOME and TMPDIR in a scratch directory;
//   - where the kernel allows unprivileged user namespaces:
//     a network namespace (no interface but a down loopback: no network) and a
//     mount namespace in which every mount is remounted read-only except the
//     scratch directory and the listed writable directories.
// What needs more (root, cgroups, seccomp): a memory limit on resident memory
// rather than address space, a process count for uid 0, syscall filtering,
// hiding other processes (a PID namespace needs a reaper in the child).
// isolation() says which of the namespace steps held for this process.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::evaluator {

struct sandbox_limits {
  // RLIMIT_AS in bytes; 0 = unlimited (CUDA maps huge address ranges).
  // Default 8 GiB.
  std::uint64_t address_space_bytes = 8ull << 30;
  // RLIMIT_NPROC (threads count too). Default 512.
  std::uint64_t max_processes = 512;
  // RLIMIT_NOFILE. Default 1024.
  std::uint64_t max_open_files = 1024;
  // RLIMIT_CPU in seconds (SIGXCPU, then SIGKILL). Default 3600.
  std::uint64_t cpu_seconds = 3600;
  // RLIMIT_FSIZE in bytes. Default 1 GiB.
  std::uint64_t max_file_bytes = 1ull << 30;
  // Unshare user + network namespaces when the kernel allows. Default on.
  bool isolate_network = true;
  // Also a mount namespace with everything read-only but the writable
  // directories. Default on (needs isolate_network's user namespace).
  bool read_only_filesystem = true;
  // CPU cores the child may run on; empty = inherit. Default empty.
  std::vector<int> cores;
  // Scheduling niceness (a warm spare starts at 10, so that its start
  // yields to the roles it shares cores with). Default 0.
  int nice = 0;
  // Landlock and seccomp, which need no privilege and work on GPU workers
  // too (containment.hpp). Default on.
  bool contain_native = true;
};

struct sandbox_spec {
  std::filesystem::path program;          // e.g. /usr/bin/python3
  std::vector<std::string> args;          // argv[1..]
  std::vector<std::string> env;           // "KEY=value", the whole environment
  std::filesystem::path scratch;          // cwd; writable; must exist
  std::vector<std::filesystem::path> writable;  // more writable directories
  std::filesystem::path log;              // stdout + stderr of the child
  sandbox_limits limits;
};

// How the child ended, for reasons and statuses.
struct sandbox_exit {
  bool exited = false;      // normal exit (code valid)
  int code = 0;
  int signal = 0;           // terminating signal, 0 if none
  bool deadline = false;    // we killed it at a deadline
  std::string text() const;  // "exit code 3", "killed by signal 11 (Segmentation fault)"
};

class sandbox_process {
 public:
  // Starts the child. Errors: io (fork, socket, exec failed).
  static result<sandbox_process> start(const sandbox_spec& spec);

  sandbox_process(sandbox_process&&) noexcept;
  sandbox_process& operator=(sandbox_process&&) noexcept;
  sandbox_process(const sandbox_process&) = delete;
  sandbox_process& operator=(const sandbox_process&) = delete;
  ~sandbox_process();  // kills the group and reaps

  // Writes one frame. Errors: unavailable (the child is gone).
  status send(std::span<const std::uint8_t> frame);

  // Reads one frame, waiting until the deadline. Errors: timeout (the group
  // was killed; exit_info() says so), unavailable (the child closed its end
  // or died; exit_info() says how), corrupt (frame larger than max_bytes).
  result<std::vector<std::uint8_t>> receive(std::chrono::steady_clock::time_point deadline,
                                            std::size_t max_bytes = 64u << 20);

  // SIGKILL to the group, then reap. Idempotent.
  void kill();

  // Moves every thread of the child to these cores and back to niceness 0
  // where this process may raise priority (root; otherwise it stays at the
  // niceness it started with, alone on its cores): a warm spare started on
  // other cores than the ones it will measure on (worker_pool.hpp).
  void pin(const std::vector<int>& cores);

  // False once the child has ended (reaped now if it had, without waiting).
  bool alive();

  // Set once the child has been reaped.
  const std::optional<sandbox_exit>& exit_info() const { return exit_; }
  // Isolation steps that held: "netns", "userns", "mountns-readonly".
  const std::vector<std::string>& isolation() const { return isolation_; }
  int pid() const { return pid_; }
  // The last bytes of the child's log, for reasons.
  std::string log_tail(std::size_t max_bytes = 2000) const;

 private:
  sandbox_process() = default;
  void reap(bool deadline);

  int pid_ = -1;
  int sock_ = -1;
  std::filesystem::path log_;
  std::optional<sandbox_exit> exit_;
  std::vector<std::string> isolation_;
};

}  // namespace crucible::evaluator
