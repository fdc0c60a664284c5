#include "actors/evaluator/sandbox.hpp"

#include "actors/evaluator/containment.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace crucible::evaluator {
namespace {

constexpr std::uint32_t iso_userns = 1, iso_netns = 2, iso_ro = 4, iso_ro_partial = 8;

struct mount_point {
  std::string path;
  unsigned long flags = 0;  // the locked per-mount flags to keep on remount
};

std::string unescape_mountinfo(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 3), nullptr, 8)));
      i += 3;
    } else {
      out.push_back(s[i]);
    }
  }
  return out;
}

std::vector<mount_point> read_mounts() {
  std::vector<mount_point> out;
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream ls(line);
    std::string id, parent, dev, root, path, opts;
    if (!(ls >> id >> parent >> dev >> root >> path >> opts)) continue;
    mount_point m{unescape_mountinfo(path), 0};
    std::istringstream os(opts);
    for (std::string o; std::getline(os, o, ',');) {
      if (o == "nosuid") m.flags |= MS_NOSUID;
      else if (o == "nodev") m.flags |= MS_NODEV;
      else if (o == "noexec") m.flags |= MS_NOEXEC;
      else if (o == "noatime") m.flags |= MS_NOATIME;
      else if (o == "nodiratime") m.flags |= MS_NODIRATIME;
      else if (o == "relatime") m.flags |= MS_RELATIME;
    }
    out.push_back(std::move(m));
  }
  return out;
}

// Moves fd to a number >= 10 with close-on-exec, so that dup2 onto 0..4 in
// the child never meets it.
int high_fd(int fd) {
  if (fd < 0) return fd;
  int h = fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return h;
}

bool write_all_fd(int fd, const void* p, std::size_t n) {
  const char* c = static_cast<const char*>(p);
  while (n > 0) {
    ssize_t w = ::write(fd, c, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    c += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

bool write_file(const char* path, const char* text) {
  int fd = ::open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  bool ok = write_all_fd(fd, text, std::strlen(text));
  ::close(fd);
  return ok;
}

// clone's entry: the child's lambda (sandbox_process::start), never returning.
template <class F>
int run_child(void* f) {
  return (*static_cast<F*>(f))();
}

}  // namespace

std::string sandbox_exit::text() const {
  std::string s;
  if (signal) s = fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  else if (exited) s = fmt::format("exit code {}", code);
  else s = "ended";
  if (deadline) s += " at its wall-clock deadline";
  return s;
}

result<sandbox_process> sandbox_process::start(const sandbox_spec& spec) {
  // Everything the child needs is prepared here: between fork and exec only
  // async-signal-safe calls are made (the parent may be multi-threaded).
  std::vector<std::string> argv_s{spec.program.string()};
  argv_s.insert(argv_s.end(), spec.args.begin(), spec.args.end());
  std::vector<char*> argv, envp;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s = spec.env;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);

  const auto& lim = spec.limits;
  std::vector<mount_point> mounts;
  std::vector<std::string> writable;
  std::error_code ec;
  writable.push_back(std::filesystem::weakly_canonical(spec.scratch, ec).string());
  for (auto& w : spec.writable) writable.push_back(std::filesystem::weakly_canonical(w, ec).string());
  std::set<std::string> writable_set(writable.begin(), writable.end());
  if (lim.isolate_network && lim.read_only_filesystem) {
    for (auto& m : read_mounts())
      if (!writable_set.count(m.path)) mounts.push_back(std::move(m));
  }
  const containment contained = lim.contain_native ? prepare_containment(writable) : containment{};
  const std::string uid_map = fmt::format("{0} {0} 1\n", getuid());
  const std::string gid_map = fmt::format("{0} {0} 1\n", getgid());
  const std::string scratch = spec.scratch.string();
  cpu_set_t cpus;
  CPU_ZERO(&cpus);
  for (int c : lim.cores) CPU_SET(c, &cpus);

  int sv[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    return make_error(errc::io, fmt::format("socketpair: {}", std::strerror(errno)));
  int status_pipe[2];
  if (::pipe2(status_pipe, O_CLOEXEC) != 0) {
    ::close(sv[0]);
    ::close(sv[1]);
    return make_error(errc::io, fmt::format("pipe: {}", std::strerror(errno)));
  }
  int parent_sock = high_fd(sv[0]), child_sock = high_fd(sv[1]);
  int status_r = high_fd(status_pipe[0]), status_w = high_fd(status_pipe[1]);
  int log_fd = high_fd(::open(spec.log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  int null_fd = high_fd(::open("/dev/null", O_RDONLY | O_CLOEXEC));
  auto close_all = [&] {
    for (int fd : {parent_sock, child_sock, status_r, status_w, log_fd, null_fd})
      if (fd >= 0) ::close(fd);
  };
  if (log_fd < 0 || null_fd < 0 || parent_sock < 0 || child_sock < 0) {
    close_all();
    return make_error(errc::io, fmt::format("cannot open the sandbox log {}", spec.log.string()));
  }

  const pid_t parent = ::getpid();
  // The child shares this process's memory until its execve (CLONE_VM |
  // CLONE_VFORK, as posix_spawn does): a fork would copy the page tables of
  // a process that may hold a policy of gigabytes (crucible run holds the
  // policy, the learner and the evaluator) and make every page it has
  // copy-on-write, so that the next write to each page faults
  // (crucible-bench-spawn, 2 GiB: 60-67 ms a fork, and writing 256 MiB
  // after it 1.0-1.2 s against 2 ms; docs/benchmarks.md). This thread
  // waits until the child has exec'd or exited. Signals stay blocked across
  // the clone, so that no handler of this process runs on the child's stack.
  sigset_t all_signals, old_mask;
  ::sigfillset(&all_signals);
  ::pthread_sigmask(SIG_SETMASK, &all_signals, &old_mask);
  auto child = [&]() -> int {
    // ---- child: async-signal-safe calls only, no allocation, and nothing
    // written but its own locals (the memory is the parent's)
    // Handlers are this process's functions: default ones for the child.
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction sa{};
      if (::sigaction(sig, nullptr, &sa) == 0 && sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN) {
        sa = {};
        sa.sa_handler = SIG_DFL;
        ::sigaction(sig, &sa, nullptr);
      }
    }
    ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
    // The worker dies with the thread that started it (an evaluator stopped
    // by a signal or a time limit leaves no worker holding its GPU).
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(125);
    ::setpgid(0, 0);
    std::uint32_t iso = 0;
    if (lim.isolate_network) {
      const int ns = CLONE_NEWUSER | CLONE_NEWNET | (lim.read_only_filesystem ? CLONE_NEWNS : 0);
      if (::unshare(ns) == 0) {
        iso |= iso_userns | iso_netns;
        write_file("/proc/self/setgroups", "deny");
        write_file("/proc/self/uid_map", uid_map.c_str());
        write_file("/proc/self/gid_map", gid_map.c_str());
        if (lim.read_only_filesystem) {
          bool all = ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
          for (auto& w : writable) all &= ::mount(w.c_str(), w.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0;
          for (auto& m : mounts)
            all &= ::mount(nullptr, m.path.c_str(), nullptr,
                           MS_REMOUNT | MS_BIND | MS_RDONLY | m.flags, nullptr) == 0;
          iso |= all ? iso_ro : iso_ro_partial;
        }
      }
    }
    auto set = [](int what, std::uint64_t soft, std::uint64_t hard) {
      struct rlimit rl{static_cast<rlim_t>(soft), static_cast<rlim_t>(hard)};
      ::setrlimit(what, &rl);
    };
    if (lim.address_space_bytes) set(RLIMIT_AS, lim.address_space_bytes, lim.address_space_bytes);
    set(RLIMIT_NPROC, lim.max_processes, lim.max_processes);
    set(RLIMIT_NOFILE, lim.max_open_files, lim.max_open_files);
    set(RLIMIT_CPU, lim.cpu_seconds, lim.cpu_seconds + 5);
    set(RLIMIT_FSIZE, lim.max_file_bytes, lim.max_file_bytes);
    set(RLIMIT_CORE, 0, 0);
    if (!lim.cores.empty()) ::sched_setaffinity(0, sizeof cpus, &cpus);
    if (lim.nice) ::setpriority(PRIO_PROCESS, 0, lim.nice);
    if (::chdir(scratch.c_str()) != 0) ::_exit(126);
    ::dup2(null_fd, 0);
    ::dup2(log_fd, 1);
    ::dup2(log_fd, 2);
    ::dup2(child_sock, 3);
    ::dup2(child_sock, 4);
    if (::close_range(5, ~0u, CLOSE_RANGE_CLOEXEC) != 0)
      for (int fd = 5; fd < 4096; ++fd) ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    ::signal(SIGPIPE, SIG_DFL);
    if (lim.contain_native) iso |= apply_containment(contained) << 8;
    write_all_fd(status_w, &iso, sizeof iso);
    ::execve(argv[0], argv.data(), envp.data());
    const std::int32_t err = errno;
    write_all_fd(status_w, &err, sizeof err);
    ::_exit(127);
  };
  std::vector<char> child_stack(256 << 10);
  const pid_t pid = ::clone(&run_child<decltype(child)>, child_stack.data() + child_stack.size(),
                            CLONE_VM | CLONE_VFORK | SIGCHLD, &child);
  const int clone_errno = errno;
  ::pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  if (pid < 0) {
    close_all();
    return make_error(errc::io, fmt::format("clone: {}", std::strerror(clone_errno)));
  }

  // ---- parent
  ::close(child_sock);
  ::close(status_w);
  ::close(log_fd);
  ::close(null_fd);
  ::setpgid(pid, pid);  // also from here, so that killpg works at once
  sandbox_process p;
  p.pid_ = pid;
  p.sock_ = parent_sock;
  p.log_ = spec.log;
  std::uint32_t iso = 0;
  std::int32_t exec_errno = 0;
  bool got_iso = ::read(status_r, &iso, sizeof iso) == sizeof iso;
  bool exec_failed = got_iso && ::read(status_r, &exec_errno, sizeof exec_errno) == sizeof exec_errno;
  ::close(status_r);
  if (iso & iso_userns) p.isolation_.push_back("userns");
  if (iso & iso_netns) p.isolation_.push_back("netns");
  if (iso & iso_ro) p.isolation_.push_back("mountns-readonly");
  if (iso & iso_ro_partial) p.isolation_.push_back("mountns-readonly-partial");
  for (auto& held : containment_report(iso >> 8)) p.isolation_.push_back(held);
  if (!got_iso || exec_failed) {
    p.kill();
    return make_error(errc::io, fmt::format("cannot start {}: {}", spec.program.string(),
                                            exec_failed ? std::strerror(exec_errno) : "child died before exec"));
  }
  return p;
}

sandbox_process::sandbox_process(sandbox_process&& o) noexcept
    : pid_(o.pid_), sock_(o.sock_), log_(std::move(o.log_)), exit_(std::move(o.exit_)),
      isolation_(std::move(o.isolation_)) {
  o.pid_ = -1;
  o.sock_ = -1;
}

sandbox_process& sandbox_process::operator=(sandbox_process&& o) noexcept {
  if (this != &o) {
    kill();
    pid_ = o.pid_;
    sock_ = o.sock_;
    log_ = std::move(o.log_);
    exit_ = std::move(o.exit_);
    isolation_ = std::move(o.isolation_);
    o.pid_ = -1;
    o.sock_ = -1;
  }
  return *this;
}

sandbox_process::~sandbox_process() { kill(); }

void sandbox_process::reap(bool deadline) {
  if (sock_ >= 0) {
    ::close(sock_);
    sock_ = -1;
  }
  if (pid_ <= 0 || exit_) return;
  // The leader is not reaped yet, so its pid (the group id) cannot be reused.
  ::kill(-pid_, SIGKILL);
  int st = 0;
  while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
  }
  sandbox_exit e;
  e.deadline = deadline;
  if (WIFEXITED(st)) {
    e.exited = true;
    e.code = WEXITSTATUS(st);
  } else if (WIFSIGNALED(st)) {
    e.signal = WTERMSIG(st);
  }
  exit_ = e;
}

void sandbox_process::kill() { reap(false); }

bool sandbox_process::alive() {
  if (pid_ <= 0 || exit_) return false;
  int st = 0;
  if (::waitpid(pid_, &st, WNOHANG) != pid_) return true;
  sandbox_exit e;
  e.exited = WIFEXITED(st);
  e.code = e.exited ? WEXITSTATUS(st) : 0;
  e.signal = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
  exit_ = e;
  ::kill(-pid_, SIGKILL);  // what it left in its group
  return false;
}

void sandbox_process::pin(const std::vector<int>& cores) {
  if (pid_ <= 0 || cores.empty()) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cores) CPU_SET(c, &set);
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator(fmt::format("/proc/{}/task", pid_), ec)) {
    const int tid = std::atoi(t.path().filename().c_str());
    ::sched_setaffinity(tid, sizeof set, &set);
    ::setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 0);
  }
}

status sandbox_process::send(std::span<const std::uint8_t> frame) {
  if (sock_ < 0) return make_error(errc::unavailable, "sandbox worker is gone");
  const std::uint32_t n = static_cast<std::uint32_t>(frame.size());
  std::uint8_t head[4] = {static_cast<std::uint8_t>(n), static_cast<std::uint8_t>(n >> 8),
                          static_cast<std::uint8_t>(n >> 16), static_cast<std::uint8_t>(n >> 24)};
  for (auto part : {std::span<const std::uint8_t>(head, 4), frame}) {
    std::size_t off = 0;
    while (off < part.size()) {
      ssize_t w = ::send(sock_, part.data() + off, part.size() - off, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) {
        reap(false);
        return make_error(errc::unavailable, "sandbox worker closed its pipe");
      }
      off += static_cast<std::size_t>(w);
    }
  }
  return status::success();
}

result<std::vector<std::uint8_t>> sandbox_process::receive(
    std::chrono::steady_clock::time_point deadline, std::size_t max_bytes) {
  auto read_n = [&](std::uint8_t* p, std::size_t n) -> status {
    std::size_t off = 0;
    while (off < n) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) {
        reap(true);
        return make_error(errc::timeout, "sandbox worker missed its deadline");
      }
      pollfd pfd{sock_, POLLIN, 0};
      int r = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1 << 30)));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) continue;
      ssize_t got = ::recv(sock_, p + off, n - off, 0);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        reap(false);
        return make_error(errc::unavailable, "sandbox worker ended: " + exit_->text());
      }
      off += static_cast<std::size_t>(got);
    }
    return status::success();
  };
  if (sock_ < 0) return make_error(errc::unavailable, "sandbox worker is gone");
  std::uint8_t head[4];
  CRUCIBLE_TRY(read_n(head, 4));
  const std::size_t n = head[0] | (head[1] << 8) | (head[2] << 16) | (std::size_t(head[3]) << 24);
  if (n > max_bytes) {
    reap(false);
    return make_error(errc::corrupt, fmt::format("sandbox frame of {} bytes", n));
  }
  std::vector<std::uint8_t> body(n);
  CRUCIBLE_TRY(read_n(body.data(), n));
  return body;
}

std::string sandbox_process::log_tail(std::size_t max_bytes) const {
  std::ifstream in(log_, std::ios::binary);
  if (!in) return {};
  in.seekg(0, std::ios::end);
  const auto size = static_cast<std::size_t>(in.tellg());
  const std::size_t from = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(from));
  std::string s(size - from, '\0');
  in.read(s.data(), static_cast<std::streamsize>(s.size()));
  return s;
}

}  // namespace crucible::evaluator
