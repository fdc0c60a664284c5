// The dashboard's board: what the roles write is what the endpoints answer.
#include <doctest/doctest.h>

#include "runtime/dashboard/board.hpp"

using namespace crucible;
using namespace crucible::dashboard;
using namespace std::chrono_literals;

namespace {

settlement_row settled(const std::string& id, const std::string& verdict, double reward) {
  settlement_row s;
  s.candidate = id;
  s.task = "cpu/relu";
  s.verdict = verdict;
  s.reward = reward;
  s.reason = verdict == "Hack" ? "defence timing_stream fired" : "";
  return s;
}

}  // namespace

TEST_CASE("the fleet and the queues are the hub's last copy") {
  const auto t0 = clock::now();
  board b({}, t0);
  CHECK_FALSE(b.fleet()["hub"].get<bool>());
  b.update_hub({{"evaluator-0", "Evaluator", "n1", "busy", {{"measure", "job-1"}}, 0, 0.1}},
               {{"measure", 3, 1, 0, 4, 2, 1}}, t0 + 1s);
  auto f = b.fleet();
  CHECK(f["hub"].get<bool>());
  REQUIRE(f["peers"].size() == 1);
  CHECK(f["peers"][0]["role"] == "Evaluator");
  CHECK(f["peers"][0]["state"] == "busy");
  CHECK(f["peers"][0]["jobs"][0]["id"] == "job-1");
  auto q = b.queues();
  CHECK(q["queued"] == 3);
  CHECK(q["in_flight"] == 1);
  CHECK(q["kinds"][0]["requeued"] == 1);
}

TEST_CASE("throughput is the rate over the window ending at each sample") {
  const auto t0 = clock::now();
  board b({.rate_window_s = 10}, t0);
  b.update_hub({}, {{"measure", 0, 0, 0, 0, 0, 0}}, t0);
  b.add_settlement(settled("a", "Success", 1.5));
  b.add_settlement(settled("b", "Failure", 0));
  b.update_hub({}, {{"measure", 0, 0, 0, 10, 10, 0}}, t0 + 5s);
  auto tp = b.throughput();
  REQUIRE(tp["t"].size() == 2);
  CHECK(tp["jobs_per_s"]["measure"][0].get<double>() == 0);
  CHECK(tp["jobs_per_s"]["measure"][1].get<double>() == doctest::Approx(2.0));
  CHECK(tp["settled_per_min"][1].get<double>() == doctest::Approx(24.0));
}

TEST_CASE("settlements come newest first with their verdicts, and the reward curve keeps a running mean") {
  board b({.max_settlements = 3, .reward_window = 2});
  b.add_settlement(settled("a", "Success", 2));
  b.add_settlement(settled("b", "Hack", 0));
  b.add_settlement(settled("c", "Success", 1));
  b.add_settlement(settled("d", "Failure", 0));
  auto s = b.settlements(2);
  CHECK(s["total"] == 4);
  CHECK(s["verdicts"]["Success"] == 2);
  REQUIRE(s["newest"].size() == 2);
  CHECK(s["newest"][0]["candidate"] == "d");
  CHECK(s["newest"][1]["verdict"] == "Success");
  auto r = b.rewards();
  CHECK(r["first_index"] == 1);  // "a" fell off the kept window
  CHECK(r["reward"] == nlohmann::json::array({0.0, 1.0, 0.0}));
  CHECK(r["mean"] == nlohmann::json::array({0.0, 0.5, 0.5}));
}

TEST_CASE("the kernels found are each task's best Success, kept when the stream has dropped it") {
  board b({.max_settlements = 2});
  b.add_settlement(settled("a", "Success", 1.5));
  b.add_settlement(settled("b", "Hack", 0));       // a hack is never a kernel found
  b.add_settlement(settled("c", "Success", 1.5));  // equal: the earlier stays
  auto other = settled("d", "Failure", 0);
  other.task = "cpu/gelu";
  b.add_settlement(other);
  b.add_settlement(settled("e", "Success", 0.9));  // "a" has left the kept stream
  auto k = b.kernels();
  CHECK(k["tasks"] == 2);
  REQUIRE(k["kernels"].size() == 1);
  CHECK(k["kernels"][0]["candidate"] == "a");
  CHECK(k["kernels"][0]["task"] == "cpu/relu");
  CHECK(k["kernels"][0]["reward"] == 1.5);
  b.add_settlement(settled("f", "Success", 2.25));
  CHECK(b.kernels()["kernels"][0]["candidate"] == "f");
}

TEST_CASE("the exemplar buckets are each task's newest publication, beside the settled tasks that have none yet") {
  const auto t0 = clock::now();
  board b({}, t0);
  CHECK_FALSE(b.exemplars()["available"].get<bool>());
  b.add_settlement(settled("a", "Failure", 0));  // cpu/relu
  auto none = b.exemplars();
  CHECK_FALSE(none["available"].get<bool>());
  REQUIRE(none["tasks"].size() == 1);
  CHECK(none["tasks"][0]["task"] == "cpu/relu");
  CHECK_FALSE(none["tasks"][0]["published"].get<bool>());
  CHECK(none["tasks"][0]["buckets"].empty());

  b.update_buckets({"cpu/gelu", "exemplar", "bucket", "linear", 1.0, 0.1, {{12, 1.2, 1.3, 1.25, 2, 1.0}}}, t0 + 1s);
  b.update_buckets({"cpu/gelu", "exemplar", "bucket", "linear", 1.0, 0.1,
                    {{12, 1.2, 1.3, 1.25, 2, 0.4}, {20, 2.0, 2.1, 2.05, 1, 0.6}}},
                   t0 + 2s);
  auto ex = b.exemplars();
  CAPTURE(ex.dump());
  CHECK(ex["available"].get<bool>());
  REQUIRE(ex["tasks"].size() == 2);  // by task name
  const auto& gelu = ex["tasks"][0];
  CHECK(gelu["task"] == "cpu/gelu");
  CHECK(gelu["published"].get<bool>());
  CHECK(gelu["store"] == "exemplar");
  CHECK(gelu["selector"] == "bucket");
  CHECK(gelu["temperature"].get<double>() == 1.0);
  CHECK(gelu["exemplars"] == 3);
  REQUIRE(gelu["buckets"].size() == 2);  // the newest replaced the first
  CHECK(gelu["buckets"][1]["bucket"] == 20);
  CHECK(gelu["buckets"][1]["low"].get<double>() == 2.0);
  CHECK(gelu["buckets"][1]["high"].get<double>() == 2.1);
  CHECK(gelu["buckets"][1]["count"] == 1);
  CHECK(gelu["buckets"][1]["mean"].get<double>() == 2.05);
  CHECK(gelu["buckets"][1]["probability"].get<double>() == 0.6);
  CHECK(gelu["age_s"].get<double>() >= 0);
  CHECK(ex["tasks"][1]["task"] == "cpu/relu");
  CHECK_FALSE(ex["tasks"][1]["published"].get<bool>());
}

TEST_CASE("without the hub's copy, the fleet is the peers the hub's events announced, and the queues say so") {
  const auto t0 = clock::now();
  board b({}, t0);
  b.update_peer("evaluator-0", "Evaluator", "n1", true);
  b.update_peer("exemplar", "Exemplar", "n1", true);
  b.update_peer("evaluator-0", "Evaluator", "n1", true);  // announced again: once
  b.update_peer("exemplar", "Exemplar", "n1", false);     // left
  auto f = b.fleet();
  CHECK_FALSE(f["hub"].get<bool>());
  REQUIRE(f["peers"].size() == 1);
  CHECK(f["peers"][0]["name"] == "evaluator-0");
  CHECK(f["peers"][0]["state"] == "registered");
  CHECK_FALSE(b.queues()["hub"].get<bool>());
  // The hub's copy, where there is one, is the fleet.
  b.update_hub({{"learner", "Learner", "n2", "idle", {}, 1, 0}}, {}, t0 + 1s);
  REQUIRE(b.fleet()["peers"].size() == 1);
  CHECK(b.fleet()["peers"][0]["name"] == "learner");
  CHECK(b.queues()["hub"].get<bool>());
}
