// The CPU stage's processes (cpu_stage.hpp) run beside the measurement, not
// on its core: real syntax-check and compile workers, their affinity read
// from /proc while they run.
#include "actors/evaluator/cpu_stage.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include "actors/evaluator/scratch.hpp"
#include "runtime/base/compute_tuning.hpp"

using namespace crucible::evaluator;

namespace {

// The cores of every Python process this process has started and that is
// alive now (/proc/self/task/*/children, then Cpus_allowed_list).
std::set<std::string> python_children_cores() {
  std::set<std::string> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream children(task.path() / "children");
    int pid = 0;
    while (children >> pid) {
      const auto proc = std::filesystem::path("/proc") / std::to_string(pid);
      std::ifstream comm(proc / "comm");
      std::string name;
      std::getline(comm, name);
      if (name.rfind("python", 0) != 0) continue;  // not exec'd yet: still the evaluator's own affinity
      std::ifstream status(proc / "status");
      for (std::string line; std::getline(status, line);)
        if (line.rfind("Cpus_allowed_list:", 0) == 0) out.insert(line.substr(line.find_first_not_of(" \t", 18)));
    }
  }
  return out;
}

}  // namespace

TEST_CASE("a prefetched candidate's compile runs on the cores beside the measuring one") {
  const auto allowed = crucible::allowed_cores();
  if (allowed.size() < 2) {
    MESSAGE("one core: the compile shares it with the measurement by necessity; nothing to check");
    return;
  }
  auto root = scratch_dir::create(std::filesystem::temp_directory_path(), "crucible-cpu-stage-test");
  REQUIRE(root.ok());
  compile_cache_options copt;
  copt.root = root->path() / "cache";
  auto cache = std::make_shared<compile_cache>(copt);
  sandbox_limits measuring;
  measuring.cores = {allowed.back()};
  cpu_stage cpu(cache, worker_environment::defaults(), measuring, root->path());

  // Named as an extension user, so the compile pool imports it (stage 0);
  // its import takes 4 s, long enough to be seen running.
  const std::string candidate = "# torch.utils.cpp_extension\nimport time\ntime.sleep(4)\nModelNew = None\n";
  cpu.ahead(candidate, "");
  std::set<std::string> seen;
  for (int i = 0; i < 200 && !cpu.ready(candidate, ""); ++i) {
    for (const auto& c : python_children_cores()) seen.insert(c);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  auto verdict = cpu.take(candidate, "");
  REQUIRE(verdict.compiled);
  REQUIRE(verdict.compiled->ok());
  CHECK((*verdict.compiled)->needed);
  REQUIRE_MESSAGE(!seen.empty(), "no syntax check or compile process was seen running");
  const std::string measuring_core = std::to_string(allowed.back());
  for (const auto& cores : seen) {
    INFO("a CPU-stage process ran on cores " << cores << "; the measuring core is " << measuring_core);
    // A list of ranges ("0-6,8"): the measuring core, the highest allowed,
    // is neither a range's end nor a single core in it.
    std::stringstream parts(cores);
    for (std::string part; std::getline(parts, part, ',');) {
      const auto dash = part.find('-');
      const int hi = std::stoi(dash == std::string::npos ? part : part.substr(dash + 1));
      const int lo = std::stoi(part.substr(0, dash));
      CHECK_FALSE((lo <= allowed.back() && allowed.back() <= hi));
    }
  }
}
