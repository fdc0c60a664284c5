// Crash safety: a child process inserts into a RocksDB store and is killed
// with SIGKILL mid-way; the reopened store's statistics equal a recount of
// the exemplars, and every insert the child saw acknowledged is there.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <random>

#include "actors/exemplar/exemplar_keys.hpp"
#include "actors/exemplar/exemplar_store.hpp"
#include "storage/rocksdb_store.hpp"
#include "storage/temp_dir.hpp"

using namespace crucible;
using namespace crucible::exemplar;

namespace {

const int task_count = 5;
std::string task_of(std::uint64_t i) { return "level1/" + std::to_string(i % task_count); }
std::string id_of(std::uint64_t i) { return "cand-" + std::to_string(i); }

// Runs in the child: inserts forever, reporting each acknowledged insert.
[[noreturn]] void insert_until_killed(const std::string& dir, int report_fd) {
  storage::rocksdb_options small;
  small.write_buffer_mib = 1;  // flushes run while the kill lands
  auto kv = storage::open_rocksdb(dir, small);
  if (!kv.ok()) _exit(3);
  auto store = exemplar_store::open(std::shared_ptr<storage::kv_store>(std::move(kv).value()));
  if (!store.ok()) _exit(4);
  std::mt19937_64 gen(99);
  std::uniform_real_distribution<double> score(0.5, 4.0);
  for (std::uint64_t i = 0;; ++i) {
    std::string code(200 + gen() % 800, 'x');
    auto r = (*store)->insert({task_of(i), id_of(i), code, score(gen)});
    if (!r.ok()) _exit(5);
    if (::write(report_fd, &i, sizeof i) != sizeof i) _exit(6);
  }
}

}  // namespace

TEST_CASE("after kill -9 during inserts the statistics equal a recount and nothing acknowledged is lost") {
  storage::temp_dir dir("exemplar-kill");
  const std::string db = dir.sub("db");
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(fds[0]);
    insert_until_killed(db, fds[1]);
  }
  ::close(fds[1]);
  std::uint64_t last = 0, acked = 0;
  while (acked < 20000) {
    ssize_t n = ::read(fds[0], &last, sizeof last);
    REQUIRE(n == static_cast<ssize_t>(sizeof last));
    ++acked;
  }
  REQUIRE(::kill(child, SIGKILL) == 0);
  int wstatus = 0;
  REQUIRE(::waitpid(child, &wstatus, 0) == child);
  CHECK(WIFSIGNALED(wstatus));
  CHECK(WTERMSIG(wstatus) == SIGKILL);
  // Acknowledgements still in the pipe were also acknowledged.
  std::uint64_t more = 0;
  while (::read(fds[0], &more, sizeof more) == static_cast<ssize_t>(sizeof more)) last = more;
  ::close(fds[0]);

  auto kv = storage::open_rocksdb(db);
  if (!kv.ok()) FAIL(kv.error().text());
  std::shared_ptr<storage::kv_store> shared(std::move(kv).value());
  auto store = exemplar_store::open(shared);
  REQUIRE(store.ok());
  std::uint64_t total = 0;
  for (int t = 0; t < task_count; ++t) {
    auto stats = (*store)->stats(task_of(t));
    auto recount = (*store)->recount(task_of(t));
    REQUIRE(stats.ok());
    REQUIRE(recount.ok());
    CHECK(*stats == *recount);
    for (const auto& b : *stats) total += b.count;
  }
  MESSAGE("acknowledged up to insert " << last << ", stored " << total);
  CHECK(total >= last + 1);
  for (std::uint64_t i = 0; i <= last; ++i) {
    auto v = shared->get(storage::family::exemplars, keys::exemplar_key(task_of(i), id_of(i)));
    REQUIRE(v.ok());
    if (!v->has_value()) FAIL("acknowledged insert " << i << " is missing");
  }
}
