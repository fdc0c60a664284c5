// check_device_free against nvidia-smi's documented CSV output: a scripted
// nvidia-smi first on PATH prints what the driver would list (this machine
// has no GPU), so that the rule itself is what is tested: a live foreign
// process is refused at once, an exited one is waited for while the driver
// releases its context, the evaluator's own spares never count.
#include "actors/evaluator/device.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using namespace crucible::evaluator;

namespace {

// PATH starts with a folder holding an nvidia-smi that prints `lines` for
// its first `times` calls (counted in a file beside it), then nothing.
struct scripted_smi {
  fs::path dir = fs::temp_directory_path() / ("crucible-smi-" + std::to_string(::getpid()));
  std::string old_path = std::getenv("PATH");
  scripted_smi(const std::string& lines, int times) {
    fs::create_directories(dir);
    std::ofstream(dir / "nvidia-smi") << "#!/bin/sh\nn=$(cat '" << (dir / "count").string()
                                      << "' 2>/dev/null || echo 0)\necho $((n + 1)) > '"
                                      << (dir / "count").string() << "'\n[ \"$n\" -lt " << times
                                      << " ] && printf '" << lines << "'\nexit 0\n";
    fs::permissions(dir / "nvidia-smi", fs::perms::owner_all);
    ::setenv("PATH", (dir.string() + ":" + old_path).c_str(), 1);
  }
  int calls() const {
    int n = 0;
    std::ifstream(dir / "count") >> n;
    return n;
  }
  ~scripted_smi() {
    ::setenv("PATH", old_path.c_str(), 1);
    fs::remove_all(dir);
  }
};

// A pid that no process has: a child that has exited and been reaped.
int exited_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

}  // namespace

TEST_CASE("a GPU listing a live process of someone else is busy at once, naming it") {
  const int live = ::getppid();  // alive for the whole test
  scripted_smi smi(std::to_string(live) + ", python3\\n", 100);
  auto r = check_device_free(device_spec{true, 0});
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("GPU 0 is busy with another compute process: " + std::to_string(live)) !=
        std::string::npos);
  CHECK(smi.calls() == 1);
}

TEST_CASE("a process that has exited is waited for while its context is released, then the GPU is free") {
  scripted_smi smi(std::to_string(exited_pid()) + ", [No data]\\n", 3);
  CHECK(check_device_free(device_spec{true, 0}).ok());
  CHECK(smi.calls() == 4);
}

TEST_CASE("the evaluator's own spares do not make its GPU busy, and a CPU is always free") {
  const int live = ::getppid();
  scripted_smi smi(std::to_string(live) + ", python3\\n", 100);
  CHECK(check_device_free(device_spec{true, 0}, {live}).ok());
  CHECK(check_device_free(device_spec{}).ok());
}
