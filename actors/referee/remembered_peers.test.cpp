// The referee's list of required detectors and exemplar stores over the
// in-memory store: kept while away within the grace, kept across a restart,
// forgotten after it.
#include <doctest/doctest.h>

#include "actors/referee/remembered_peers.hpp"
#include "storage/memory_store.hpp"

using namespace crucible;
using namespace crucible::referee;

namespace {
constexpr std::int64_t ms = 1'000'000;
const std::vector<std::string> static_kinds{"detect:static"};

std::vector<std::string> names_away(const remembered_peers& r, std::int64_t now) {
  std::vector<std::string> out;
  for (auto& [name, d] : r.away(now)) out.push_back(name);
  return out;
}
}  // namespace

TEST_CASE("a required detector that leaves is away for the grace, then forgotten and erased") {
  auto kv = std::make_shared<storage::memory_store>();
  remembered_peers r(kv, std::chrono::milliseconds(1000));
  REQUIRE(r.joined("static-1", true, static_kinds, 5000).ok());
  CHECK(names_away(r, 0).empty());  // on the bus: asked as a registered peer, not from here
  auto left = r.left("static-1", 100 * ms);
  REQUIRE(left.ok());
  REQUIRE(*left);
  CHECK((*left)->detector);
  auto away = r.away(1099 * ms);
  REQUIRE(away.size() == 1);
  CHECK(away[0].first == "static-1");
  CHECK(away[0].second->kinds == static_kinds);
  CHECK(away[0].second->deadline_ms == 5000);
  auto none = r.expire(1099 * ms);
  REQUIRE(none.ok());
  CHECK(none->empty());
  auto gone = r.expire(1100 * ms);
  REQUIRE(gone.ok());
  CHECK(*gone == std::vector<std::string>{"static-1"});
  CHECK(names_away(r, 1100 * ms).empty());
  remembered_peers again(kv, std::chrono::milliseconds(1000));
  REQUIRE(again.recover(2000 * ms).ok());
  CHECK(names_away(again, 2000 * ms).empty());
}

TEST_CASE("a restarted referee counts every peer it listed as away from its start until it registers") {
  auto kv = std::make_shared<storage::memory_store>();
  {
    remembered_peers r(kv, std::chrono::milliseconds(1000));
    REQUIRE(r.joined("static-1", true, static_kinds, 5000).ok());
    REQUIRE(r.joined("judge-1", true, {"detect:judge"}, 0).ok());
    REQUIRE(r.joined("plausibility", false, {"detect:plausibility"}, 0).ok());  // advisory: never listed
    REQUIRE(r.joined("evaluator-0", false, {"measure", "verify:cpu"}, 0).ok());  // never listed
    REQUIRE(r.joined("exemplar", false, {"exemplar.sample", "exemplar.insert"}, 0).ok());
  }
  remembered_peers r(kv, std::chrono::milliseconds(1000));
  REQUIRE(r.recover(500 * ms).ok());
  CHECK(names_away(r, 1499 * ms) == std::vector<std::string>{"exemplar", "judge-1", "static-1"});
  CHECK(names_away(r, 1500 * ms).empty());
  CHECK(r.away_count() == 3);
  for (auto& [name, p] : r.away(0)) CHECK(p->detector == (name != "exemplar"));
  REQUIRE(r.joined("exemplar", false, {"exemplar.sample", "exemplar.insert"}, 0).ok());
  REQUIRE(r.joined("static-1", true, static_kinds, 5000).ok());  // the hub's registry reaches it
  CHECK(names_away(r, 1000 * ms) == std::vector<std::string>{"judge-1"});
  // Registered again without `required`: no longer listed, here or on disk.
  REQUIRE(r.joined("judge-1", false, {"detect:judge"}, 0).ok());
  CHECK(names_away(r, 1000 * ms).empty());
  remembered_peers third(kv, std::chrono::milliseconds(1000));
  REQUIRE(third.recover(2000 * ms).ok());
  CHECK(names_away(third, 2000 * ms) == (std::vector<std::string>{"exemplar", "static-1"}));
}

TEST_CASE("with a grace of 0 a required detector that leaves is forgotten at once") {
  auto kv = std::make_shared<storage::memory_store>();
  remembered_peers r(kv, std::chrono::milliseconds(0));
  REQUIRE(r.joined("static-1", true, static_kinds, 0).ok());
  auto left = r.left("static-1", 0);
  REQUIRE(left.ok());
  CHECK(*left == nullptr);
  CHECK(names_away(r, 0).empty());
  remembered_peers again(kv, std::chrono::milliseconds(0));
  REQUIRE(again.recover(0).ok());
  CHECK(again.away_count() == 0);
}

TEST_CASE("a stored record that is not a remembered peer's is an error naming its key") {
  auto kv = std::make_shared<storage::memory_store>();
  storage::write_batch b;
  b.put(storage::family::candidates, "p/static-1", "detector soon\ndetect:static");
  REQUIRE(kv->write(b).ok());
  remembered_peers r(kv, std::chrono::milliseconds(1000));
  auto s = r.recover(0);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == errc::corrupt);
  CHECK(s.error().message.find("candidates/p/static-1") != std::string::npos);
}
