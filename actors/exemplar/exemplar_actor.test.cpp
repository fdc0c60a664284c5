// The exemplar actor's protocol, message by message.
#include <doctest/doctest.h>

#include <cmath>
#include <condition_variable>
#include <mutex>

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

  explicit fixture(exemplar_options options = {}, bucket_listener on_buckets = {},
                   const std::vector<exemplar_input>& before = {}) {
    auto s = exemplar_store::open(kv, options);
    REQUIRE(s.ok());
    store = std::move(s).value();
    for (const auto& e : before) REQUIRE(store->insert(e).ok());
    actor = spawn_exemplar_actor(sys, store, options, std::move(on_buckets));
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

// The bucket reports the actor hands its listener, from its thread.
struct reports {
  std::mutex mu;
  std::condition_variable arrived;
  std::vector<bucket_report> heard;  // GUARDED_BY(mu)

  bucket_listener listener() {
    return [this](bucket_report r) {
      std::lock_guard lock(mu);
      heard.push_back(std::move(r));
      arrived.notify_all();
    };
  }
  // The first n reports, once there are n (a minute at most).
  std::vector<bucket_report> first(std::size_t n) {
    std::unique_lock lock(mu);
    arrived.wait_for(lock, std::chrono::minutes(1), [&] { return heard.size() >= n; });
    return {heard.begin(), heard.begin() + static_cast<std::ptrdiff_t>(std::min(n, heard.size()))};
  }
  std::size_t size() {
    std::lock_guard lock(mu);
    return heard.size();
  }
};

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

TEST_CASE("an insert publishes its task's buckets, and the tasks changed within the publish interval go out together") {
  exemplar_options options;
  options.bucket_publish_interval = std::chrono::minutes(10);  // the test sends the timer's publish_atom itself
  options.bucket_refresh_interval = std::chrono::milliseconds(0);
  reports r;
  fixture f(options, r.listener());
  REQUIRE(f.settle(success("c1", "a", 1.25)).outcome == settle_outcome::inserted);
  auto first = r.first(1);  // the first change goes out at once
  REQUIRE(first.size() == 1);
  CHECK(first[0].task_id == "a");
  REQUIRE(first[0].buckets.size() == 1);
  CHECK(first[0].buckets[0].count == 1);
  CHECK(first[0].probability == std::vector<double>{1.0});
  CHECK(first[0].bucket_width == 0.1);

  // Within the interval: held, duplicates and failures change nothing.
  REQUIRE(f.settle(success("c2", "a", 2.05)).outcome == settle_outcome::inserted);
  REQUIRE(f.settle(success("c2", "a", 2.05)).outcome == settle_outcome::duplicate);
  REQUIRE(f.settle(success("c3", "b", 1.0)).outcome == settle_outcome::inserted);
  settlement failed = success("c4", "c", 3.0);
  failed.status = settlement_status::failure;
  REQUIRE(f.settle(failed).outcome == settle_outcome::ignored);
  CHECK(f.stats("a").size() == 2);  // a turn of the actor: nothing was published meanwhile
  CHECK(r.size() == 1);
  f.self->send(f.actor, publish_atom::value);
  auto all = r.first(3);
  REQUIRE(all.size() == 3);
  CHECK(all[1].task_id == "a");
  REQUIRE(all[1].buckets.size() == 2);
  CHECK(all[1].buckets[1].range.low == doctest::Approx(2.0));
  CHECK(all[1].buckets[1].mean() == doctest::Approx(2.05));
  // Equation 1 at temperature 1 over means 1.25 and 2.05.
  REQUIRE(all[1].probability.size() == 2);
  CHECK(all[1].probability[1] == doctest::Approx(std::exp(0.4) / (std::exp(-0.4) + std::exp(0.4))));
  CHECK(all[2].task_id == "b");
  CHECK(f.stats("a").size() == 2);
  CHECK(r.size() == 3);
}

TEST_CASE("every task's buckets are published one publish interval after start, and again each refresh interval") {
  exemplar_options options;
  options.bucket_publish_interval = std::chrono::milliseconds(10);
  options.bucket_refresh_interval = std::chrono::milliseconds(20);
  reports r;
  fixture f(options, r.listener(), {{"a", "c1", "code", 1.0}, {"b", "c2", "code", 3.02}, {"b", "c3", "code", 3.05}});
  auto heard = r.first(4);
  REQUIRE(heard.size() == 4);
  CHECK(heard[0].task_id == "a");
  CHECK(heard[1].task_id == "b");
  REQUIRE(heard[1].buckets.size() == 1);
  CHECK(heard[1].buckets[0].count == 2);
  CHECK(heard[2].task_id == "a");  // the refresh
  CHECK(heard[3].task_id == "b");
}

TEST_CASE("a first draw's chances follow Equation 1, or the exemplars' shares for the uniform selector") {
  std::vector<bucket_summary> buckets{{10, {1.0, 1.1}, 3, 3'000'000}, {20, {2.0, 2.1}, 1, 2'000'000}};
  exemplar_options options;
  options.temperature = 0.5;
  auto p = first_draw_chances(buckets, options);
  REQUIRE(p.size() == 2);
  CHECK(p[0] + p[1] == doctest::Approx(1.0));
  CHECK(p[1] / p[0] == doctest::Approx(std::exp(2.0)));
  options.selector = selector_kind::uniform;
  CHECK(first_draw_chances(buckets, options) == std::vector<double>{0.75, 0.25});
  CHECK(first_draw_chances({}, options).empty());
}
