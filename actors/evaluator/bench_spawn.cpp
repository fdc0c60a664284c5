// crucible-bench-spawn: what starting a sandbox worker costs a process that
// holds a large heap (crucible run: the policy, the learner and the
// evaluator in one process), by how the child is made. The process touches
// --gib GiB, then for each way of starting /bin/true --spawns times: the
// start's own time (the starting thread is held until the child's exec),
// and what the heap's owner pays after it: the minor page faults and the
// time of writing one byte in each page of --touch-mib MiB of its heap.
//
//   fork   fork + execve: the peer, what sandbox.cpp did before
//   clone  clone(CLONE_VM | CLONE_VFORK) + execve, what it does now
//   sandbox_process::start  the real start (namespaces, Landlock, seccomp,
//          rlimits: sandbox_limits' defaults)
//
// Prints a line per way and the ratios of fork's figures over clone's.
// Usage: crucible-bench-spawn [--gib G (2)] [--spawns N (50)] [--touch-mib M (512)]
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "actors/evaluator/sandbox.hpp"
#include "actors/evaluator/scratch.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

long minor_faults() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

struct figures {
  double start_ms = 0, write_ms = 0, faults = 0;  // means per spawn
};

// Spawns n times with `spawn` (which returns once the child has exec'd or
// ended), writing a byte in each page of `touch` after each.
figures measure(int n, std::vector<char>& heap, std::size_t touch, const std::function<void()>& spawn) {
  figures f;
  const long page = ::sysconf(_SC_PAGESIZE);
  for (int i = 0; i < n; ++i) {
    const auto t0 = clock_type::now();
    spawn();
    const auto t1 = clock_type::now();
    const long before = minor_faults();
    for (std::size_t at = 0; at < touch; at += static_cast<std::size_t>(page)) heap[at] = static_cast<char>(i + at);
    const auto t2 = clock_type::now();
    f.start_ms += std::chrono::duration<double, std::milli>(t1 - t0).count() / n;
    f.write_ms += std::chrono::duration<double, std::milli>(t2 - t1).count() / n;
    f.faults += static_cast<double>(minor_faults() - before) / n;
  }
  return f;
}

char* const true_argv[] = {const_cast<char*>("/bin/true"), nullptr};
char* const no_env[] = {nullptr};

int exec_true(void*) {
  ::execve("/bin/true", true_argv, no_env);
  ::_exit(127);
}

void reap(pid_t pid) {
  if (pid > 0) ::waitpid(pid, nullptr, 0);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"What starting a sandbox worker costs a process with a large heap: fork against clone(CLONE_VM | CLONE_VFORK)"};
  double gib = 2;
  int spawns = 50;
  std::size_t touch_mib = 512;
  app.add_option("--gib", gib, "GiB of heap the process holds, every page touched")->check(CLI::PositiveNumber);
  app.add_option("--spawns", spawns, "Starts of /bin/true per way")->check(CLI::PositiveNumber);
  app.add_option("--touch-mib", touch_mib, "MiB of that heap written after each start")->check(CLI::PositiveNumber);
  CLI11_PARSE(app, argc, argv);

  std::vector<char> heap(static_cast<std::size_t>(gib * (1u << 30)));
  std::memset(heap.data(), 1, heap.size());
  const std::size_t touch = std::min(heap.size(), touch_mib << 20);
  std::printf("heap %.1f GiB touched; %d starts of /bin/true per way; %zu MiB written after each\n", gib, spawns,
              touch_mib);

  const figures forked = measure(spawns, heap, touch, [] {
    const pid_t pid = ::fork();
    if (pid == 0) exec_true(nullptr);
    reap(pid);
  });
  std::vector<char> stack(256 << 10);
  const figures cloned = measure(spawns, heap, touch, [&] {
    reap(::clone(exec_true, stack.data() + stack.size(), CLONE_VM | CLONE_VFORK | SIGCHLD, nullptr));
  });
  auto scratch = crucible::evaluator::scratch_dir::create(std::filesystem::temp_directory_path(), "bench-spawn");
  if (!scratch) {
    std::fprintf(stderr, "crucible-bench-spawn: %s\n", scratch.error().text().c_str());
    return 1;
  }
  crucible::evaluator::sandbox_spec spec;
  spec.program = "/bin/true";
  spec.scratch = scratch->path();
  spec.log = scratch->path() / "log";
  bool started = true;
  const figures sandboxed = measure(spawns, heap, touch, [&] {
    auto p = crucible::evaluator::sandbox_process::start(spec);
    started &= p.ok();
  });
  if (!started) {
    std::fprintf(stderr, "crucible-bench-spawn: sandbox_process::start failed\n");
    return 1;
  }
  auto line = [](const char* way, const figures& f) {
    std::printf("%-24s start %7.3f ms   then %9.0f page faults, writes %7.2f ms\n", way, f.start_ms, f.faults,
                f.write_ms);
  };
  line("fork (peer)", forked);
  line("clone(VM|VFORK)", cloned);
  line("sandbox_process::start", sandboxed);
  std::printf("fork over clone: start %.1fx, writes after %.1fx; page faults after %.0f against %.0f\n",
              forked.start_ms / std::max(1e-9, cloned.start_ms), forked.write_ms / std::max(1e-9, cloned.write_ms),
              forked.faults, cloned.faults);
  return 0;
}
