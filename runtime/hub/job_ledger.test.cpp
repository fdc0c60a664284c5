// The job ledger on its own: what a new incarnation of the hub loads after
// each kind of write, torn write, crash between the two stores, and segment
// turnover. A second job_ledger on the same stores is a restarted hub.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

#include "runtime/hub/job_ledger.hpp"
#include "storage/memory_store.hpp"
#include "storage/temp_dir.hpp"

using namespace crucible;
using namespace crucible::hub;

namespace {

std::vector<std::uint8_t> bytes_of(const std::string& s) { return {s.begin(), s.end()}; }
std::string text(const std::vector<std::uint8_t>& b) { return {b.begin(), b.end()}; }

// What a restarted hub would load: submit and result texts by submit text.
std::map<std::string, std::string> reload(storage::kv_store& kv, storage::segment_store& log,
                                          job_ledger_options o = {}) {
  job_ledger again(kv, log, o);
  auto entries = again.load();
  REQUIRE(entries.ok());
  std::map<std::string, std::string> out;
  for (auto& e : *entries) out[text(e.submit)] = text(e.result);
  return out;
}

// A fresh ledger on in-memory stores, loaded as a hub does at start.
struct rig {
  storage::memory_store kv;
  storage::memory_segments log;
  job_ledger ledger;
  explicit rig(job_ledger_options o = {}) : ledger(kv, log, o) { REQUIRE(ledger.load().ok()); }
  void submit(const std::string& id, const std::string& body) {
    ledger.stage_submit(id, bytes_of(body));
    REQUIRE(ledger.commit().ok());
  }
};

}  // namespace

TEST_CASE("a committed submit is loaded after a restart, a staged one is not") {
  rig r;
  auto& [kv, log, ledger] = r;
  r.submit("j1", "submit j1");
  ledger.stage_submit("j2", bytes_of("submit j2"));  // the hub dies before its commit
  CHECK(reload(kv, log) == std::map<std::string, std::string>{{"submit j1", ""}});
}

TEST_CASE("a kept result is loaded with its job, an acknowledged job is not loaded and is known as acknowledged") {
  rig r;
  auto& [kv, log, ledger] = r;
  ledger.stage_submit("j1", bytes_of("submit j1"));
  ledger.stage_submit("j2", bytes_of("submit j2"));
  ledger.stage_submit("j3", bytes_of("submit j3"));
  REQUIRE(ledger.commit().ok());
  ledger.stage_result("j2", bytes_of("result j2"));
  ledger.stage_acked("j3", 1);
  REQUIRE(ledger.commit().ok());
  CHECK(*ledger.was_acked("j3"));
  CHECK_FALSE(*ledger.was_acked("j1"));
  CHECK(ledger.live_jobs() == 2);
  CHECK(reload(kv, log) == std::map<std::string, std::string>{{"submit j1", ""}, {"submit j2", "result j2"}});
  // A job submitted and acknowledged in one group is gone as well.
  ledger.stage_submit("j4", bytes_of("submit j4"));
  ledger.stage_acked("j4", 2);
  REQUIRE(ledger.commit().ok());
  CHECK(reload(kv, log).count("submit j4") == 0);
}

TEST_CASE("a load rewrites the live jobs and a second restart loads the same") {
  rig r;
  auto& [kv, log, ledger] = r;
  for (int i = 0; i < 10; ++i) ledger.stage_submit("j" + std::to_string(i), bytes_of("s" + std::to_string(i)));
  REQUIRE(ledger.commit().ok());
  for (int i = 0; i < 10; i += 2) ledger.stage_acked("j" + std::to_string(i), 1);
  REQUIRE(ledger.commit().ok());
  auto first = reload(kv, log);
  CHECK(first.size() == 5);
  CHECK(reload(kv, log) == first);
  CHECK(*log.list() == std::vector<std::uint64_t>{3});  // one segment per load, the older ones removed
}

TEST_CASE("a torn write at the end of a segment is ignored, and the failed commit is written again at the next") {
  rig r;
  auto& [kv, log, ledger] = r;
  r.submit("j1", "submit j1");
  log.fail_next_appends(1);  // half of j2's record reaches the segment
  ledger.stage_submit("j2", bytes_of("submit j2"));
  CHECK_FALSE(ledger.commit().ok());
  CHECK(ledger.failing() != nullptr);
  ledger.stage_submit("j3", bytes_of("submit j3"));  // j2 and j3 go to a new segment
  REQUIRE(ledger.commit().ok());
  CHECK(ledger.failing() == nullptr);
  CHECK(reload(kv, log) ==
        std::map<std::string, std::string>{{"submit j1", ""}, {"submit j2", ""}, {"submit j3", ""}});
}

TEST_CASE("an acknowledgement marker whose log record was cut by a kill -9 still keeps the job from coming back") {
  rig r;
  auto& [kv, log, ledger] = r;
  r.submit("j1", "submit j1");
  log.fail_next_appends(1);  // the marker is written first, then the log append is cut
  ledger.stage_acked("j1", 1);
  CHECK_FALSE(ledger.commit().ok());
  CHECK(reload(kv, log).empty());
}

TEST_CASE("a failed marker write stages nothing: the job is still loaded") {
  rig r;
  auto& [kv, log, ledger] = r;
  r.submit("j1", "submit j1");
  kv.fail_next_writes(1);
  ledger.stage_acked("j1", 1);
  CHECK_FALSE(ledger.commit().ok());
  CHECK(reload(kv, log).size() == 1);
}

TEST_CASE("full segments are reclaimed, long-lived jobs move forward and keep their bytes") {
  job_ledger_options o;
  o.segment_bytes = 4096;
  rig r(o);
  auto& [kv, log, ledger] = r;
  r.submit("old", std::string(500, 'o'));
  ledger.stage_result("old", bytes_of("result of old"));
  REQUIRE(ledger.commit().ok());
  r.submit("pending", "still pending");
  for (int i = 0; i < 2000; ++i) {
    auto id = "j" + std::to_string(i);
    r.submit(id, std::string(300, 'x'));
    ledger.stage_acked(id, 1);
    REQUIRE(ledger.commit().ok());
  }
  CHECK(ledger.segments() <= 3);
  CHECK(log.bytes() <= 3 * 4096 + 1024);
  CHECK(ledger.live_jobs() == 2);
  CHECK(reload(kv, log, o) ==
        std::map<std::string, std::string>{{std::string(500, 'o'), "result of old"}, {"still pending", ""}});
}

TEST_CASE("many long-lived jobs move forward together when their segment is reclaimed") {
  job_ledger_options o;
  o.segment_bytes = 8192;
  rig r(o);
  std::map<std::string, std::string> expected;
  for (int i = 0; i < 100; ++i) {  // more than the rotation reads one by one
    auto body = "pending " + std::to_string(i);
    r.submit("p" + std::to_string(i), body);
    expected[body] = "";
  }
  for (int i = 0; i < 400; ++i) {
    auto id = "j" + std::to_string(i);
    r.submit(id, std::string(200, 'x'));
    r.ledger.stage_acked(id, 1);
    REQUIRE(r.ledger.commit().ok());
  }
  CHECK(r.ledger.segments() <= 3);
  CHECK(r.ledger.live_jobs() == 100);
  CHECK(reload(r.kv, r.log, o) == expected);
}

TEST_CASE("a backlog larger than a segment is copied forward about once per segment of new records, not at every commit") {
  job_ledger_options o;
  o.segment_bytes = 4096;
  rig r(o);
  for (int i = 0; i < 40; ++i) r.submit("backlog" + std::to_string(i), std::to_string(i) + std::string(500, 'b'));  // ~20 KB live
  for (int i = 0; i < 100; ++i) {  // ~100 KB of new records, a commit each
    auto id = "j" + std::to_string(i);
    r.submit(id, std::string(1000, 'x'));
    r.ledger.stage_acked(id, 1);
    REQUIRE(r.ledger.commit().ok());
  }
  CHECK(r.log.appended() < 3 * (40 * 520 + 100 * 1040));
  CHECK(r.ledger.live_jobs() == 40);
  CHECK(reload(r.kv, r.log, o).size() == 40);
}

TEST_CASE("records of the RocksDB-only ledger of older versions are recovered and moved into the log") {
  storage::memory_store kv;
  storage::memory_segments log;
  storage::write_batch old;
  old.put(storage::family::jobs, std::string("p\0j1", 4), "submit j1");
  old.put(storage::family::jobs, std::string("p\0j2", 4), "submit j2");
  old.put(storage::family::jobs, std::string("r\0j2", 4), "result j2");
  REQUIRE(kv.write(old).ok());
  auto expected = std::map<std::string, std::string>{{"submit j1", ""}, {"submit j2", "result j2"}};
  CHECK(reload(kv, log) == expected);
  int left = 0;
  REQUIRE(kv.scan(storage::family::jobs, std::string("p\0", 2), [&](auto, auto) { return ++left, true; }).ok());
  CHECK(left == 0);
  CHECK(reload(kv, log) == expected);
}

TEST_CASE("the job log on disk survives its ledger, and a flipped bit ends what is read of a segment") {
  storage::temp_dir dir("job-ledger");
  storage::memory_store kv;
  {
    auto log = storage::open_file_segments(dir.sub("joblog"));
    REQUIRE(log.ok());
    job_ledger ledger(kv, **log);
    REQUIRE(ledger.load().ok());
    ledger.stage_submit("j1", bytes_of(std::string(70000, 'a')));  // larger than a read buffer
    REQUIRE(ledger.commit().ok());
    ledger.stage_submit("j2", bytes_of("submit j2"));
    REQUIRE(ledger.commit().ok());
  }
  {
    auto log = storage::open_file_segments(dir.sub("joblog"));
    REQUIRE(log.ok());
    CHECK(reload(kv, **log) == std::map<std::string, std::string>{{std::string(70000, 'a'), ""}, {"submit j2", ""}});
  }
  // Flip one byte inside j2's record (the last bytes of the only segment).
  auto log = storage::open_file_segments(dir.sub("joblog"));
  REQUIRE(log.ok());
  auto segs = (*log)->list();
  REQUIRE(segs.ok());
  REQUIRE(segs->size() == 1);
  char name[32];
  std::snprintf(name, sizeof name, "%020llu.log", static_cast<unsigned long long>(segs->front()));
  std::fstream f(dir.sub("joblog") + "/" + name, std::ios::in | std::ios::out | std::ios::binary);
  f.seekp(-3, std::ios::end);
  f.put('Z');
  f.close();
  CHECK(reload(kv, **log) == std::map<std::string, std::string>{{std::string(70000, 'a'), ""}});
}
