// The pool's quiet_scope (worker_pool.hpp): no spare's start runs beside a
// timed measurement. Real Python workers in real sandboxes.
#include "actors/evaluator/worker_pool.hpp"
#include "runtime/base/error_text.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <thread>

using namespace crucible::evaluator;

namespace {

// The state letter of /proc/PID/stat ('T' stopped, 'S' sleeping, 'R' running).
char state_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = text.rfind(") ");
  return close == std::string::npos || close + 2 >= text.size() ? '?' : text[close + 2];
}

// Whether `want(state)` holds within 10 s (signals are delivered asynchronously).
template <class Want>
bool eventually(int pid, Want want) {
  for (int i = 0; i < 100; ++i) {
    if (want(state_of(pid))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

// A pool of one CPU spare, started at once, in its own scratch root.
struct one_spare {
  scratch_dir root = scratch_dir::create(std::filesystem::temp_directory_path(), "crucible-pool-test").value();
  worker_recipe recipe = [this] {
    worker_recipe r;
    r.how.env = worker_environment::defaults();
    r.scratch_root = root.path();
    return r;
  }();
  worker_pool pool{1, 1};
  one_spare() {
    pool.prime(recipe);
    REQUIRE(pool.spare_pids().size() == 1);
  }
};

// The worker loads a CPU task (the first request a spare serves).
auto load_scale_relu(started_worker& worker) {
  std::ifstream task(std::filesystem::path(CRUCIBLE_SOURCE_DIR) / "configs/tasks/cpu/scale_relu/task.py");
  std::stringstream source;
  source << task.rdbuf();
  const std::uint64_t probes[] = {1};
  return worker.session.load_task(source.str(), "crucible_task", 1, "cpu", 1, probes,
                                  clock_type::now() + std::chrono::seconds(120));
}

}  // namespace

TEST_CASE("a spare past its imports is stopped while a worker is timed, goes on after, and serves its task") {
  one_spare f;
  auto& pool = f.pool;
  const int pid = pool.spare_pids()[0];

  // Until the spare has imported (a Python importing PyTorch: seconds, more
  // on a busy machine), a quiet scope leaves it alone; once it has, the
  // scope stops it.
  bool stopped = false;
  for (int i = 0; i < 1200 && !stopped; ++i) {
    {
      auto quiet = pool.quiet();
      if (!quiet.stopped().empty()) {
        CHECK(quiet.stopped() == std::vector<int>{pid});
        CHECK(eventually(pid, [](char s) { return s == 'T'; }));
        stopped = true;
      }
    }
    if (!stopped) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  REQUIRE_MESSAGE(stopped, "the spare never wrote .imported in 120 s");
  CHECK(eventually(pid, [](char s) { return s != 'T'; }));  // continued when the scope went

  auto worker = pool.take(f.recipe);
  REQUIRE(worker.ok());
  CHECK(worker->warm);
  CHECK(worker->session.process().pid() == pid);
  auto loaded = load_scale_relu(*worker);
  REQUIRE_MESSAGE(loaded.ok(), crucible::error_text(loaded));
  CHECK_MESSAGE(loaded->ok, loaded->error);
  worker->session.shutdown();
}

TEST_CASE("a spare that finishes its imports while a worker is timed waits for the timing to end") {
  one_spare f;
  auto& pool = f.pool;

  // The scope begins while the spare still imports PyTorch (seconds), so it
  // is not stopped; it must then wait at the end of its imports until the
  // scope goes, 2 s after .imported appeared.
  std::optional<std::filesystem::path> imported;
  {
    auto quiet = pool.quiet();
    REQUIRE(quiet.stopped().empty());
    for (int i = 0; i < 1200 && !imported; ++i) {
      for (const auto& dir : std::filesystem::directory_iterator(f.root.path()))
        if (std::filesystem::exists(dir.path() / ".imported")) imported = dir.path() / ".imported";
      if (!imported) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    REQUIRE_MESSAGE(imported, "the spare never wrote .imported in 120 s");
    std::this_thread::sleep_for(std::chrono::seconds(2));
  }

  // Its timeline ("worker imported=A ready=B ...", seconds since its
  // interpreter started): ready came at least 2 s after imported. Without
  // the wait a CPU worker is ready a few milliseconds after its imports.
  auto worker = pool.take(f.recipe);
  REQUIRE(worker.ok());
  CHECK(worker->warm);
  auto loaded = load_scale_relu(*worker);
  REQUIRE_MESSAGE(loaded.ok(), crucible::error_text(loaded));
  REQUIRE_MESSAGE(loaded->ok, loaded->error);
  double imported_s = -1, ready_s = -1;
  for (const auto& line : loaded->info)
    if (line.rfind("worker ", 0) == 0) {
      const auto i = line.find("imported="), r = line.find("ready=");
      REQUIRE(i != std::string::npos);
      REQUIRE(r != std::string::npos);
      imported_s = std::stod(line.substr(i + 9));
      ready_s = std::stod(line.substr(r + 6));
    }
  INFO("imported at " << imported_s << " s, ready at " << ready_s << " s");
  REQUIRE(imported_s >= 0);
  CHECK(ready_s - imported_s >= 2.0);
  worker->session.shutdown();
}
