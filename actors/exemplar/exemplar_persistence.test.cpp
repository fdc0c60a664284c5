// Crash safety: a child process inserts into a RocksDB store and is killed
// with SIGKILL mid-way, several times over on the same database; after each
// kill the reopened store's statistics equal a recount of the exemplars, the
// bucket index has exactly one slot per exemplar, and every insert the child
// saw acknowledged is there.
#include <doctest/doctest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <thread>

#include "actors/exemplar/exemplar_keys.hpp"
#include "actors/exemplar/exemplar_store.hpp"
#include "storage/rocksdb_store.hpp"
#include "storage/temp_dir.hpp"

using namespace crucible;
using namespace crucible::exemplar;

namespace {

const int task_count = 5;
std::string task_of(std::uint64_t i) { return "level1/" + std::to_string(i % task_count); }
std::string id_of(int round, std::uint64_t i) { return "r" + std::to_string(round) + "-" + std::to_string(i); }

// Runs in the child: inserts forever, reporting each acknowledged insert.
[[noreturn]] void insert_until_killed(const std::string& dir, int round, int report_fd) {
  storage::rocksdb_options small;
  small.write_buffer_mib = 1;  // flushes run while the kill lands
  auto kv = storage::open_rocksdb(dir, small);
  if (!kv.ok()) _exit(3);
  auto store = exemplar_store::open(std::shared_ptr<storage::kv_store>(std::move(kv).value()));
  if (!store.ok()) _exit(4);
  std::mt19937_64 gen(99 + round);
  std::uniform_real_distribution<double> score(0.5, 4.0);
  for (std::uint64_t i = 0;; ++i) {
    std::string code(200 + gen() % 800, 'x');
    auto r = (*store)->insert({task_of(i), id_of(round, i), code, score(gen)});
    if (!r.ok()) _exit(5);
    if (::write(report_fd, &i, sizeof i) != sizeof i) _exit(6);
  }
}

// The writer is this test binary started afresh (fork, then exec of
// /proc/self/exe): a child that merely forks from a process which has had
// RocksDB open inherits RocksDB's background thread pool without its threads,
// and stalls at its first flush. The variables below select the writer before
// doctest's main runs.
const char* const writer_env = "CRUCIBLE_EXEMPLAR_WRITER";

struct writer_entry {
  writer_entry() {
    const char* db = std::getenv(writer_env);
    if (!db) return;
    insert_until_killed(db, std::atoi(std::getenv("CRUCIBLE_EXEMPLAR_ROUND")),
                        std::atoi(std::getenv("CRUCIBLE_EXEMPLAR_FD")));
  }
} const start_writer_if_asked;

// Starts a writer, lets it acknowledge `acks` inserts, kills it with SIGKILL;
// returns the last acknowledged insert.
std::uint64_t insert_and_kill(const std::string& db, int round, std::uint64_t acks) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(fds[0]);
    ::setenv(writer_env, db.c_str(), 1);
    ::setenv("CRUCIBLE_EXEMPLAR_ROUND", std::to_string(round).c_str(), 1);
    ::setenv("CRUCIBLE_EXEMPLAR_FD", std::to_string(fds[1]).c_str(), 1);
    char self[] = "/proc/self/exe";
    char* argv[] = {self, nullptr};
    ::execv(self, argv);
    _exit(7);
  }
  ::close(fds[1]);
  std::uint64_t last = 0;
  for (std::uint64_t seen = 0; seen < acks; ++seen) REQUIRE(::read(fds[0], &last, sizeof last) == static_cast<ssize_t>(sizeof last));
  // Let the writer run on for a random moment so that the kill lands at a
  // random point of an insert, not right after it reported one (a woken
  // reader tends to preempt the writer at exactly that point).
  std::mt19937_64 jitter(std::random_device{}());
  std::this_thread::sleep_for(std::chrono::microseconds(jitter() % 3000));
  REQUIRE(::kill(child, SIGKILL) == 0);
  int wstatus = 0;
  REQUIRE(::waitpid(child, &wstatus, 0) == child);
  CHECK(WIFSIGNALED(wstatus));
  CHECK(WTERMSIG(wstatus) == SIGKILL);
  // Acknowledgements still in the pipe were also acknowledged.
  std::uint64_t more = 0;
  while (::read(fds[0], &more, sizeof more) == static_cast<ssize_t>(sizeof more)) last = more;
  ::close(fds[0]);
  return last;
}

}  // namespace

TEST_CASE("after kill -9 during inserts the statistics equal a recount and nothing acknowledged is lost") {
  storage::temp_dir dir("exemplar-kill");
  const std::string db = dir.sub("db");
  std::uint64_t expected_at_least = 0;
  for (int round = 0; round < 6; ++round) {
    CAPTURE(round);
    const std::uint64_t last = insert_and_kill(db, round, 4000 + 1000 * round);
    expected_at_least += last + 1;

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
      for (const auto& b : *stats) {
        total += b.count;
        // The bucket's index has exactly the slots 0..count-1.
        for (std::uint64_t o : {std::uint64_t{0}, b.count - 1, b.count}) {
          auto slot = shared->get(storage::family::buckets, keys::index_key(task_of(t), b.bucket, o));
          REQUIRE(slot.ok());
          CHECK(slot->has_value() == (o < b.count));
        }
      }
      rng gen(5);
      for (int i = 0; i < 20; ++i) REQUIRE((*store)->sample(task_of(t), 2, 0.5, gen).ok());
    }
    MESSAGE("round " << round << ": acknowledged up to insert " << last << ", stored " << total << " in all");
    CHECK(total >= expected_at_least);
    for (std::uint64_t i = 0; i <= last; ++i) {
      auto v = shared->get(storage::family::exemplars, keys::exemplar_key(task_of(i), id_of(round, i)));
      REQUIRE(v.ok());
      if (!v->has_value()) FAIL("acknowledged insert " << i << " of round " << round << " is missing");
    }
    expected_at_least = total;
  }
}
