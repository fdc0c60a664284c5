// The exemplar actor's protocol, message by message.
#include <doctest/doctest.h>

#include <caf/all.hpp>

#include "actors/exemplar/exemplar_actor.hpp"
#include "storage/memory_store.hpp"

using namespace crucible;
using namespace crucible::exemplar;

namespace {

struct fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  std::shared_ptr<storage::memory_store> kv = std::make_shared<storage::memory_store>();
  std::shared_ptr<exemplar_store> store;
  exemplar_actor actor;
  caf::scoped_actor self{sys};

  explicit fixture(exemplar_options options = {}) {
    auto s = exemplar_store::open(kv, options);
    REQUIRE(s.ok());
    store = std::move(s).value();
    actor = spawn_exemplar_actor(sys, store, options);
  }
  ~fixture() { self->send_exit(actor, caf::exit_reason::user_shutdown); }

  settle_reply settle(const settlement& s) {
    settle_reply reply;
    self->request(actor, caf::infinite, settle_atom::value, s)
        .receive([&](const settle_reply& r) { reply = r; }, [&](const caf::error& e) { FAIL(sys.render(e)); });
    return reply;
  }
  exemplar_answer sample(const exemplar_query& q) {
    exemplar_answer answer;
    self->request(actor, caf::infinite, sample_atom::value, q)
        .receive([&](const exemplar_answer& a) { answer = a; }, [&](const caf::error& e) { FAIL(sys.render(e)); });
    return answer;
  }
  std::vector<bucket_summary> stats(const std::string& task) {
    std::vector<bucket_summary> out;
    self->request(actor, caf::infinite, stats_atom::value, task)
        .receive([&](const std::vector<bucket_summary>& s) { out = s; },
                 [&](const caf::error& e) { FAIL(sys.render(e)); });
    return out;
  }
};

settlement success(std::string id, std::string task, double reward) {
  return {std::move(id), std::move(task), settlement_status::success, reward, "class ModelNew: pass"};
}

}  // namespace

TEST_CASE("a settled success becomes an exemplar and a re-delivered settlement changes nothing") {
  fixture f;
  CHECK(f.settle(success("c1", "level1/1", 1.42)).outcome == settle_outcome::inserted);
  auto before = f.stats("level1/1");
  int writes = f.kv->applied_writes();
  auto again = f.settle(success("c1", "level1/1", 1.42));
  CHECK(again.outcome == settle_outcome::duplicate);
  CHECK(f.kv->applied_writes() == writes);
  CHECK(f.stats("level1/1") == before);
  REQUIRE(before.size() == 1);
  CHECK(before[0].count == 1);
}

TEST_CASE("failed, void, hacked and codeless settlements are not exemplars") {
  fixture f;
  for (auto st : {settlement_status::failure, settlement_status::void_, settlement_status::hack,
                  settlement_status::no_code}) {
    settlement s = success("c-" + std::to_string(static_cast<int>(st)), "t", 2.0);
    s.status = st;
    CHECK(f.settle(s).outcome == settle_outcome::ignored);
  }
  settlement no_code = success("c9", "t", 2.0);
  no_code.code.clear();
  CHECK(f.settle(no_code).outcome == settle_outcome::ignored);
  CHECK(f.stats("t").empty());
  CHECK(f.kv->applied_writes() == 1);  // only the bucketing record written at open
}

TEST_CASE("a sample request answers exemplars of distinct buckets, reproducibly for a seed") {
  fixture f;
  for (int i = 0; i < 12; ++i) REQUIRE(f.settle(success("c" + std::to_string(i), "t", 1.0 + 0.25 * i)).outcome == settle_outcome::inserted);
  exemplar_query q{"t", 2, 0.5, 77};
  auto a = f.sample(q);
  CHECK(a.error.empty());
  CHECK(a.task_id == "t");
  REQUIRE(a.exemplars.size() == 2);
  CHECK(a.exemplars[0].bucket != a.exemplars[1].bucket);
  CHECK(a.exemplars[0].code == "class ModelNew: pass");
  auto b = f.sample(q);
  REQUIRE(b.exemplars.size() == 2);
  CHECK(a.exemplars[0].id == b.exemplars[0].id);
  CHECK(a.exemplars[1].id == b.exemplars[1].id);
  // n = 0 takes the default of 2.
  CHECK(f.sample({"t", 0, 0, 0}).exemplars.size() == 2);
  CHECK(f.sample({"unknown", 2, 1.0, 1}).exemplars.empty());
}

TEST_CASE("a bad task in a sample request is answered with an error, not a crash") {
  fixture f;
  auto a = f.sample({"", 2, 1.0, 1});
  CHECK(a.exemplars.empty());
  CHECK(a.error.find("task") != std::string::npos);
}

TEST_CASE("settle outcomes have text forms") {
  CHECK(std::string(to_string(settle_outcome::duplicate)) == "duplicate");
  CHECK(caf::deep_to_string(exemplar_query{"t", 2, 1.0, 3}).find("exemplar_query") != std::string::npos);
}

TEST_CASE("settlements the store cannot write wait unanswered, in order, and are inserted once it writes again") {
  exemplar_options options;
  options.storage_retry = std::chrono::milliseconds(10);
  fixture f(options);
  f.kv->fail_next_writes(3);  // a full disk: memory_store fails them with errc::io
  auto first = f.self->request(f.actor, caf::infinite, settle_atom::value, success("c1", "t", 1.0));
  auto second = f.self->request(f.actor, caf::infinite, settle_atom::value, success("c2", "t", 2.0));
  CHECK(f.sample({"t", 2, 1.0, 7}).error.empty());  // reads go on meanwhile
  for (auto* pending : {&first, &second})
    pending->receive([&](const settle_reply& r) { CHECK_MESSAGE(r.outcome == settle_outcome::inserted, r.reason); },
                     [&](const caf::error& e) { FAIL(f.sys.render(e)); });
  CHECK(f.kv->failed_writes() == 3);
  CHECK(f.stats("t").size() == 2);
  CHECK(f.sample({"t", 2, 1.0, 7}).exemplars.size() == 2);
}

TEST_CASE("a settlement the store refuses for what it is is answered failed at once") {
  fixture f;
  auto r = f.settle(success("c1", std::string("bad\0task", 8), 1.0));
  CHECK(r.outcome == settle_outcome::failed);
  CHECK(r.reason.find("task") != std::string::npos);
}
