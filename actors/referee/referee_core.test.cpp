// The referee's logic message by message on the in-memory store: no bus, no
// clock, no sleeps (time is the now_ns each call is given).
#include <doctest/doctest.h>

#include "actors/referee/referee_core.hpp"
#include "actors/referee/referee_wire.hpp"
#include "storage/memory_store.hpp"

using namespace crucible;
using namespace crucible::referee;
namespace m = crucible::msg;
using messages::str;

namespace {

constexpr std::int64_t ms = 1'000'000;

bytes measurement(const std::string& cid, double speedup, const std::string& evaluator,
                  m::EvalStatus status = m::EvalStatus::Ok, bool verify = false) {
  return simple_measurement(cid, "t", status, speedup, evaluator, "cpu", verify);
}

bytes peer_event(const std::string& name, m::Role role, std::vector<std::string> kinds, bool joined = true,
                 bool required = false, std::uint32_t deadline_ms = 0) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<flatbuffers::Offset<flatbuffers::String>> k;
  for (auto& s : kinds) k.push_back(fbb.CreateString(s));
  auto kv = fbb.CreateVector(k);
  auto e = m::CreatePeerEvent(fbb, fbb.CreateString(name), role, fbb.CreateString("node"), joined, kv, required,
                              deadline_ms);
  return w.finish(e, "hub", name);
}

bytes verdict(const std::string& cid, const std::string& detector, m::VerdictKind kind) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  auto v = m::CreateVerdict(fbb, fbb.CreateString(cid), fbb.CreateString(detector), kind,
                            fbb.CreateString(kind == m::VerdictKind::Hack ? "side stream" : "looks fine"));
  return w.finish(v, detector, cid);
}

struct hack_seen {
  std::string id, reason, detector;
};

// A core over a memory store, with its outbox collected.
struct rig {
  std::shared_ptr<storage::memory_store> kv = std::make_shared<storage::memory_store>();
  referee_options options;
  std::vector<hack_seen> hacks;
  std::unique_ptr<referee_core> core;
  referee_outbox out;  // everything produced since the last clear()

  // Every candidate here has the same code unless a case gives its own:
  // measurement reuse is off but in the cases about it.
  rig() {
    options.reuse_identical = false;
    start();
  }
  void start() {
    core = std::make_unique<referee_core>(options, kv, "referee", [this](const candidate_record& r,
                                                                         const std::string& reason,
                                                                         const std::string& detector) -> status {
      hacks.push_back({r.id, reason, detector});
      return {};
    });
  }
  void restart(std::int64_t now) {
    start();
    REQUIRE(core->recover(now).ok());
    take();
  }
  void take() {
    auto o = core->take_outbox();
    for (auto& j : o.jobs) out.jobs.push_back(j);
    for (auto& p : o.publish) out.publish.push_back(p);
    for (auto& r : o.replies) out.replies.push_back(r);
    for (auto& a : o.acks) out.acks.push_back(a);
  }
  void clear() { out = {}; }
  void settle(const std::string& cid, std::int64_t now, const std::string& code = "class ModelNew: pass") {
    REQUIRE(core->on_settle(candidate_envelope(cid, "t", code, "client"), now).ok());
    take();
  }
  void result(const std::string& job, bytes payload, const std::string& worker, std::int64_t now, bool ok = true) {
    REQUIRE(core->on_result({job, ok, std::move(payload), ok ? "" : "worker died", worker}, now).ok());
    take();
  }
  void peer(bytes event, std::int64_t now) {
    REQUIRE(core->on_peer_event(event, now).ok());
    take();
  }
  void tick(std::int64_t now) {
    REQUIRE(core->on_tick(now).ok());
    take();
  }
  void two_evaluators(std::int64_t now) {
    peer(peer_event("ev1", m::Role::Evaluator, {"measure", "verify:cpu"}), now);
    peer(peer_event("ev2", m::Role::Evaluator, {"measure", "verify:cpu"}), now);
  }
  bool has_job(const std::string& id) const {
    for (auto& j : out.jobs)
      if (j.id == id) return true;
    return false;
  }
  const referee_outbox::job* job(const std::string& id) const {
    for (auto& j : out.jobs)
      if (j.id == id) return &j;
    return nullptr;
  }
  // The one settlement replied for cid (fails when none or different ones).
  const m::Settlement* settlement(const std::string& cid) const {
    const bytes* first = nullptr;
    for (auto& [id, b] : out.replies)
      if (id == cid) {
        if (first) REQUIRE(*first == b);
        first = &b;
      }
    REQUIRE_MESSAGE(first, "no settlement for " << cid);
    return payload_of<m::Settlement>(*first);
  }
  std::size_t replies_for(const std::string& cid) const {
    std::size_t n = 0;
    for (auto& [id, b] : out.replies) n += id == cid;
    return n;
  }
};

}  // namespace

TEST_CASE("a speedup below the thresholds settles with its measured reward, verification not needed") {
  rig r;
  r.two_evaluators(0);
  r.settle("a", 0);
  REQUIRE(r.has_job("measure/a"));
  CHECK(r.job("measure/a")->kind == "measure");
  r.result("measure/a", measurement("a", 1.5, "ev1"), "ev1", 10 * ms);
  auto* s = r.settlement("a");
  CHECK(s->status() == m::SettlementStatus::Success);
  CHECK(s->reward() == doctest::Approx(1.5));
  CHECK_FALSE(s->verified());
  CHECK(str(s->reason()).find("not needed") != std::string_view::npos);
  CHECK(str(s->code()) == "class ModelNew: pass");
  CHECK(r.out.publish.size() == 1);
  CHECK_FALSE(r.has_job("verify/a"));
  CHECK(r.out.acks == std::vector<std::string>{"measure/a"});
}

TEST_CASE("a speedup above 3x is verified on another evaluator of the same model and stands when they agree") {
  rig r;
  r.two_evaluators(0);
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 4.0, "ev1"), "ev1", 10 * ms);
  auto* v = r.job("verify/a");
  REQUIRE(v);
  CHECK(v->kind == "verify:cpu");
  CHECK(v->exclude_worker == "ev1");
  CHECK(r.out.replies.empty());
  r.result("verify/a", measurement("a", 4.3, "ev2", m::EvalStatus::Ok, true), "ev2", 20 * ms);
  auto* s = r.settlement("a");
  CHECK(s->status() == m::SettlementStatus::Success);
  CHECK(s->verified());
  CHECK(s->reward() == doctest::Approx(4.0));
  candidate_ledger ledger(r.kv);
  CHECK(*ledger.best_verified("t") == doctest::Approx(4.0));
  auto rec = ledger.get("a");
  REQUIRE((rec.ok() && rec->has_value()));
  CHECK(!(*rec)->measurement.empty());
  CHECK(!(*rec)->verification.empty());  // both measurements kept
}

TEST_CASE("measurements that disagree by more than 10% void the candidate") {
  rig r;
  r.two_evaluators(0);
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 4.0, "ev1"), "ev1", 10 * ms);
  r.result("verify/a", measurement("a", 3.5, "ev2", m::EvalStatus::Ok, true), "ev2", 20 * ms);
  auto* s = r.settlement("a");
  CHECK(s->status() == m::SettlementStatus::Void);
  CHECK(s->reward() == 0.0);
  CHECK(str(s->reason()).find("disagrees") != std::string_view::npos);
  CHECK(*candidate_ledger(r.kv).best_verified("t") == 0.0);
}

TEST_CASE("at the thresholds: 3.0 exactly is not verified, a difference of exactly agree_within still agrees") {
  rig r;
  r.options.verify_above = 3.0;
  r.options.agree_within = 0.25;  // binary-exact: 4.0 against 5.0 is exactly 25%
  r.start();
  r.two_evaluators(0);
  r.settle("at", 0);
  r.result("measure/at", measurement("at", 3.0, "ev1"), "ev1", 10 * ms);
  CHECK_FALSE(r.has_job("verify/at"));
  CHECK(r.settlement("at")->status() == m::SettlementStatus::Success);
  r.settle("edge", 0);
  r.result("measure/edge", measurement("edge", 4.0, "ev1"), "ev1", 10 * ms);
  REQUIRE(r.has_job("verify/edge"));
  r.result("verify/edge", measurement("edge", 5.0, "ev2", m::EvalStatus::Ok, true), "ev2", 20 * ms);
  CHECK(r.settlement("edge")->verified());
}

TEST_CASE("a speedup above 2x the task's best verified speedup is verified even below 3x") {
  rig r;
  r.two_evaluators(0);
  REQUIRE(candidate_ledger(r.kv).set_best_verified("t", 1.2).ok());
  r.settle("b", 0);
  r.result("measure/b", measurement("b", 2.5, "ev1"), "ev1", 10 * ms);
  CHECK(r.has_job("verify/b"));
  r.settle("c", 0);
  r.result("measure/c", measurement("c", 2.3, "ev1"), "ev1", 10 * ms);
  CHECK_FALSE(r.has_job("verify/c"));
}

TEST_CASE("with one evaluator the referee waits for a second up to its deadline, then settles unverified") {
  rig r;
  r.options.second_device_wait = std::chrono::milliseconds(1000);
  r.start();
  r.peer(peer_event("ev1", m::Role::Evaluator, {"measure", "verify:cpu"}), 0);
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 5.0, "ev1"), "ev1", 10 * ms);
  CHECK_FALSE(r.has_job("verify/a"));
  r.tick(900 * ms);
  CHECK(r.out.replies.empty());
  r.tick(1011 * ms);
  auto* s = r.settlement("a");
  CHECK(s->status() == m::SettlementStatus::Success);
  CHECK_FALSE(s->verified());
  CHECK(str(s->reason()).find("no second evaluator of model 'cpu' within 1000 ms") != std::string_view::npos);
  CHECK(*candidate_ledger(r.kv).best_verified("t") == 0.0);  // unverified results never set the bar
}

TEST_CASE("with the unverified policy void, a candidate without a second device is void") {
  rig r;
  r.options.second_device_wait = std::chrono::milliseconds(1000);
  r.options.unverified = unverified_policy::void_it;
  r.start();
  r.peer(peer_event("ev1", m::Role::Evaluator, {"measure", "verify:cpu"}), 0);
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 5.0, "ev1"), "ev1", 10 * ms);
  r.tick(2000 * ms);
  auto* s = r.settlement("a");
  CHECK(s->status() == m::SettlementStatus::Void);
  CHECK(str(s->reason()).find("unverified (policy void)") != std::string_view::npos);
}

TEST_CASE("a second evaluator of the same model that joins while the referee waits gets the verify job") {
  rig r;
  r.peer(peer_event("ev1", m::Role::Evaluator, {"measure", "verify:cpu"}), 0);
  r.peer(peer_event("gpu", m::Role::Evaluator, {"measure", "verify:NVIDIA H200"}), 0);
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 5.0, "ev1"), "ev1", 10 * ms);
  CHECK_FALSE(r.has_job("verify/a"));  // another model does not count
  r.peer(peer_event("ev2", m::Role::Evaluator, {"measure", "verify:cpu"}), 20 * ms);
  REQUIRE(r.has_job("verify/a"));
  CHECK(r.job("verify/a")->exclude_worker == "ev1");
}

TEST_CASE("failed measurements settle at once with reward 0 and their reason") {
  rig r;
  r.settle("bad", 0);
  r.result("measure/bad", measurement("bad", 0, "ev1", m::EvalStatus::Incorrect), "ev1", 10 * ms);
  CHECK(r.settlement("bad")->status() == m::SettlementStatus::Failure);
  CHECK(str(r.settlement("bad")->reason()).find("Incorrect") != std::string_view::npos);
  CHECK(str(r.settlement("bad")->code()).empty());
  r.settle("lost", 0);
  r.result("measure/lost", {}, "", 10 * ms, false);
  CHECK(r.settlement("lost")->status() == m::SettlementStatus::Failure);
  r.settle("empty", 0, "");
  CHECK(r.settlement("empty")->status() == m::SettlementStatus::NoCode);
  CHECK_FALSE(r.has_job("measure/empty"));
}

TEST_CASE("a required detector's hack verdict settles as hack with reward 0 and records the hack") {
  rig r;
  r.peer(peer_event("static-1", m::Role::Detector, {"detect:static"}, true, true, 5000), 0);
  r.settle("h", 0);
  r.result("measure/h", measurement("h", 1.8, "ev1"), "ev1", 10 * ms);
  auto* d = r.job("detect/h/static");
  REQUIRE(d);
  CHECK(d->kind == "detect:static");
  auto* req = payload_of<m::DetectRequest>(d->payload);
  REQUIRE(req);
  CHECK(str(req->candidate()->candidate_id()) == "h");
  CHECK(req->measurement()->speedup_raw() == 1.8);
  CHECK(r.out.replies.empty());  // waits for the required verdict
  r.tick(4000 * ms);
  CHECK(r.out.replies.empty());
  r.result("detect/h/static", verdict("h", "static", m::VerdictKind::Hack), "static-1", 4100 * ms);
  auto* s = r.settlement("h");
  CHECK(s->status() == m::SettlementStatus::Hack);
  CHECK(s->reward() == 0.0);
  REQUIRE(r.hacks.size() == 1);
  CHECK(r.hacks[0].detector == "static");
  CHECK(r.hacks[0].reason.find("side stream") != std::string::npos);
}

TEST_CASE("an advisory detector's hack verdict is recorded, not applied, it is not waited for past its deadline") {
  rig r;
  r.peer(peer_event("judge-1", m::Role::Detector, {"detect:judge"}, true, false, 1000), 0);
  r.peer(peer_event("slow-1", m::Role::Detector, {"detect:slow"}, true, false, 1000), 0);
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 1.8, "ev1"), "ev1", 10 * ms);
  r.result("detect/a/judge", verdict("a", "judge", m::VerdictKind::Hack), "judge-1", 20 * ms);
  CHECK(r.out.replies.empty());
  r.tick(1011 * ms);  // slow never answers
  auto* s = r.settlement("a");
  CHECK(s->status() == m::SettlementStatus::Success);
  CHECK(str(s->reason()).find("advisory judge: Hack") != std::string_view::npos);
  CHECK(str(s->reason()).find("advisory slow: no verdict in time") != std::string_view::npos);
  CHECK(r.hacks.empty());
}

TEST_CASE("a required detector silent past its deadline voids the candidate, or is ignored by policy") {
  for (auto policy : {missing_verdict_policy::void_it, missing_verdict_policy::ignore}) {
    rig r;
    r.options.required_missing = policy;
    r.start();
    r.peer(peer_event("static-1", m::Role::Detector, {"detect:static"}, true, true, 0), 0);  // config deadline
    r.settle("a", 0);
    r.result("measure/a", measurement("a", 1.8, "ev1"), "ev1", 10 * ms);
    r.tick(30000 * ms);
    CHECK(r.out.replies.empty());
    r.tick(30011 * ms);
    CHECK(r.settlement("a")->status() ==
          (policy == missing_verdict_policy::void_it ? m::SettlementStatus::Void : m::SettlementStatus::Success));
  }
}

TEST_CASE("a required detector that drops off the bus is still asked, and its verdict when it is back decides") {
  // What CI saw (docs/operations.md): the hub declared a stalled detector
  // dead, and a candidate judged in that gap settled Success without it.
  rig r;
  r.peer(peer_event("static-1", m::Role::Detector, {"detect:static"}, true, true, 5000), 0);
  r.peer(peer_event("static-1", m::Role::Detector, {"detect:static"}, false), 100 * ms);  // declared dead
  r.settle("h", 0);
  r.result("measure/h", measurement("h", 1.8, "ev1"), "ev1", 200 * ms);
  REQUIRE(r.job("detect/h/static"));  // queued at the hub until it is back
  CHECK(r.out.replies.empty());
  r.peer(peer_event("static-1", m::Role::Detector, {"detect:static"}, true, true, 5000), 1000 * ms);
  CHECK(r.out.replies.empty());
  r.result("detect/h/static", verdict("h", "static", m::VerdictKind::Hack), "static-1", 1100 * ms);
  CHECK(r.settlement("h")->status() == m::SettlementStatus::Hack);
  REQUIRE(r.hacks.size() == 1);
  CHECK(r.hacks[0].detector == "static");
}

TEST_CASE("a required detector gone for good voids what is judged within its grace, and is forgotten after it") {
  rig r;
  r.options.peer_grace = std::chrono::milliseconds(60000);
  r.start();
  r.peer(peer_event("static-1", m::Role::Detector, {"detect:static"}, true, true, 5000), 0);
  r.peer(peer_event("judge-1", m::Role::Detector, {"detect:judge"}, true, false, 1000), 0);
  r.peer(peer_event("static-1", m::Role::Detector, {"detect:static"}, false), 0);
  r.peer(peer_event("judge-1", m::Role::Detector, {"detect:judge"}, false), 0);
  // Judged within the grace: asked, silent past its deadline, voided by the
  // default required_missing. The advisory one is forgotten at once.
  r.settle("in", 0);
  r.result("measure/in", measurement("in", 1.8, "ev1"), "ev1", 59000 * ms);
  CHECK(r.has_job("detect/in/static"));
  CHECK_FALSE(r.has_job("detect/in/judge"));
  r.tick(63999 * ms);
  CHECK(r.out.replies.empty());
  r.tick(64000 * ms);
  auto* s = r.settlement("in");
  CHECK(s->status() == m::SettlementStatus::Void);
  CHECK(str(s->reason()).find("required detector static gave no verdict") != std::string_view::npos);
  // Judged after the grace: settled on its measurement, the detector not asked.
  r.settle("after", 65000 * ms);
  r.result("measure/after", measurement("after", 1.8, "ev1"), "ev1", 65001 * ms);
  CHECK_FALSE(r.has_job("detect/after/static"));
  CHECK(r.settlement("after")->status() == m::SettlementStatus::Success);
}

TEST_CASE("a restarted referee asks the required detectors it knew before the hub's registry reaches it") {
  rig r;
  r.peer(peer_event("static-1", m::Role::Detector, {"detect:static"}, true, true, 5000), 0);
  r.peer(peer_event("judge-1", m::Role::Detector, {"detect:judge"}, true, false, 1000), 0);
  r.settle("h", 0);
  r.restart(10 * ms);  // knows no peer now
  r.result("measure/h", measurement("h", 1.8, "ev1"), "ev1", 20 * ms);
  CHECK(r.has_job("detect/h/static"));
  CHECK_FALSE(r.has_job("detect/h/judge"));  // advisory: not kept
  CHECK(r.out.replies.empty());
  r.result("detect/h/static", verdict("h", "static", m::VerdictKind::Hack), "static-1", 30 * ms);
  CHECK(r.settlement("h")->status() == m::SettlementStatus::Hack);
}

TEST_CASE("with peer_grace_ms 0 a required detector that leaves is not asked") {
  rig r;
  r.options.peer_grace = std::chrono::milliseconds(0);
  r.start();
  r.peer(peer_event("static-1", m::Role::Detector, {"detect:static"}, true, true, 5000), 0);
  r.peer(peer_event("static-1", m::Role::Detector, {"detect:static"}, false), 0);
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 1.8, "ev1"), "ev1", 10 * ms);
  CHECK_FALSE(r.has_job("detect/a/static"));
  CHECK(r.settlement("a")->status() == m::SettlementStatus::Success);
}

TEST_CASE("re-delivered settle jobs and results change nothing: one measurement, one settlement, one event") {
  rig r;
  r.settle("a", 0);
  r.settle("a", 1 * ms);
  CHECK(r.out.jobs.size() == 1);
  CHECK(r.out.replies.empty());
  r.result("measure/a", measurement("a", 1.5, "ev1"), "ev1", 10 * ms);
  r.result("measure/a", measurement("a", 2.5, "ev2"), "ev2", 11 * ms);  // a late duplicate from elsewhere
  r.settle("a", 12 * ms);
  r.tick(13 * ms);
  CHECK(r.replies_for("a") == 2);  // one per settle delivery after settling...
  CHECK(r.settlement("a")->reward() == doctest::Approx(1.5));  // ...both the same settlement
  CHECK(r.out.publish.size() == 1);
  CHECK(r.out.acks == std::vector<std::string>{"measure/a", "measure/a"});
  CHECK(r.out.jobs.size() == 1);
}

TEST_CASE("a restarted referee resumes every unsettled candidate from its ledger and answers settled ones") {
  rig r;
  r.two_evaluators(0);
  r.settle("done", 0);
  r.result("measure/done", measurement("done", 1.5, "ev1"), "ev1", 5 * ms);
  bytes first = r.out.replies.at(0).second;
  r.settle("measuring", 0);
  r.settle("verifying", 0);
  r.result("measure/verifying", measurement("verifying", 6.0, "ev1"), "ev1", 10 * ms);
  REQUIRE(r.has_job("verify/verifying"));
  r.clear();

  r.restart(20 * ms);
  CHECK(r.has_job("measure/measuring"));
  REQUIRE(r.has_job("verify/verifying"));
  CHECK(r.job("verify/verifying")->exclude_worker == "ev1");
  CHECK_FALSE(r.has_job("measure/done"));
  CHECK(r.out.publish.empty());
  r.settle("done", 30 * ms);
  REQUIRE(r.out.replies.size() == 1);
  CHECK(r.out.replies[0].second == first);  // the same settlement, byte for byte
  r.result("verify/verifying", measurement("verifying", 6.1, "ev2", m::EvalStatus::Ok, true), "ev2", 40 * ms);
  r.settle("verifying", 50 * ms);
  CHECK(r.settlement("verifying")->verified());
  r.result("measure/measuring", measurement("measuring", 0, "ev2", m::EvalStatus::CompileError), "ev2", 60 * ms);
  r.settle("measuring", 70 * ms);
  CHECK(r.settlement("measuring")->status() == m::SettlementStatus::Failure);
}

TEST_CASE("a settlement recorded but not yet published is published after a restart") {
  rig r;
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 1.5, "ev1"), "ev1", 10 * ms);
  r.clear();
  // As if the process died after storing the settlement, before the event left.
  candidate_ledger ledger(r.kv);
  auto rec = ledger.get("a");
  REQUIRE((rec.ok() && rec->has_value()));
  (*rec)->published = false;
  REQUIRE(ledger.put(**rec).ok());
  r.restart(20 * ms);
  REQUIRE(r.out.publish.size() == 1);
  CHECK(payload_of<m::Settlement>(r.out.publish[0])->reward() == doctest::Approx(1.5));
  r.clear();
  r.restart(30 * ms);
  CHECK(r.out.publish.empty());
}

TEST_CASE("clean successes go to the exemplar store when one is registered, and the settle job waits for it") {
  rig r;
  r.peer(peer_event("exemplar", m::Role::Exemplar, {"exemplar.sample", "exemplar.insert"}), 0);
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 1.5, "ev1"), "ev1", 10 * ms);
  auto* ins = r.job("insert/a");
  REQUIRE(ins);
  CHECK(ins->kind == "exemplar.insert");
  CHECK(payload_of<m::Settlement>(ins->payload)->status() == m::SettlementStatus::Success);
  CHECK(r.out.replies.empty());
  CHECK(r.out.publish.size() == 1);
  r.result("insert/a", {}, "exemplar", 20 * ms);
  CHECK(r.settlement("a")->status() == m::SettlementStatus::Success);
  r.settle("bad", 0);
  r.result("measure/bad", measurement("bad", 0, "ev1", m::EvalStatus::Incorrect), "ev1", 10 * ms);
  CHECK_FALSE(r.has_job("insert/bad"));
}

TEST_CASE("a clean success settled while the exemplar store is away, or before a restarted referee hears of it, is inserted") {
  rig r;
  r.peer(peer_event("exemplar", m::Role::Exemplar, {"exemplar.sample", "exemplar.insert"}), 0);
  r.peer(peer_event("exemplar", m::Role::Exemplar, {"exemplar.sample", "exemplar.insert"}, false), 5 * ms);
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 1.3, "ev1"), "ev1", 10 * ms);
  REQUIRE(r.job("insert/a"));  // queued at the hub until the store is back
  CHECK(r.out.replies.empty());
  r.settle("b", 20 * ms);
  r.restart(30 * ms);  // knows no peer now
  r.result("measure/b", measurement("b", 1.4, "ev1"), "ev1", 40 * ms);
  REQUIRE(r.job("insert/b"));
  r.peer(peer_event("exemplar", m::Role::Exemplar, {"exemplar.sample", "exemplar.insert"}), 50 * ms);
  r.result("insert/a", {}, "exemplar", 60 * ms);
  r.result("insert/b", {}, "exemplar", 60 * ms);
  CHECK(r.settlement("a")->status() == m::SettlementStatus::Success);
  CHECK(r.settlement("b")->status() == m::SettlementStatus::Success);
}

TEST_CASE("a settle payload that is not a candidate is refused with a reason") {
  rig r;
  auto s = r.core->on_settle(bytes{1, 2, 3}, 0);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("Candidate") != std::string::npos);
  auto empty = r.core->on_settle(candidate_envelope("", "t", "x", "c"), 0);
  CHECK_FALSE(empty.ok());
}

TEST_CASE("fault injection: a scaled verify measurement voids a candidate whose two evaluators agree") {
  rig r;
  r.options.inject_verify_scale = 2.0;
  r.start();
  r.two_evaluators(0);
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 4.0, "ev1"), "ev1", 10 * ms);
  r.result("verify/a", measurement("a", 4.0, "ev2", m::EvalStatus::Ok, true), "ev2", 20 * ms);
  auto* s = r.settlement("a");
  CHECK(s->status() == m::SettlementStatus::Void);
  CHECK(str(s->reason()).find("fault injection") != std::string_view::npos);
}

// A ledger that refuses writes (a full disk: memory_store's fault injection
// fails them with errc::io, as rocksdb_store does with ENOSPC).
TEST_CASE("a settle job whose candidate cannot be written leaves nothing behind and is taken when given again") {
  rig r;
  r.kv->fail_next_writes(1);
  auto refused = r.core->on_settle(candidate_envelope("a", "t", "class ModelNew: pass", "client"), 0);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == errc::io);
  r.take();
  CHECK(r.out.jobs.empty());
  CHECK(r.core->active() == 0);
  r.kv->fail_next_writes(1);
  CHECK_FALSE(r.core->on_settle(candidate_envelope("none", "t", "", "client"), 0).ok());  // NoCode settles at once
  r.take();
  CHECK(r.out.replies.empty());
  CHECK(r.out.publish.empty());
  r.settle("a", 1);
  CHECK(r.has_job("measure/a"));
  r.settle("none", 1, "");
  CHECK(r.settlement("none")->status() == m::SettlementStatus::NoCode);
}

TEST_CASE("a required detector whose record cannot be written is asked all the same, and listed when registered again") {
  rig r;
  r.kv->fail_next_writes(1);
  auto refused = r.core->on_peer_event(peer_event("static-1", m::Role::Detector, {"detect:static"}, true, true, 5000), 0);
  REQUIRE_FALSE(refused.ok());
  CHECK(refused.error().code == errc::io);
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 1.8, "ev1"), "ev1", 10 * ms);
  CHECK(r.has_job("detect/a/static"));
  // The registry's next republication writes it: a restart then still asks it.
  r.peer(peer_event("static-1", m::Role::Detector, {"detect:static"}, true, true, 5000), 20 * ms);
  r.settle("b", 30 * ms);
  r.restart(40 * ms);
  r.result("measure/b", measurement("b", 1.8, "ev1"), "ev1", 50 * ms);
  CHECK(r.has_job("detect/b/static"));
}

TEST_CASE("a result that cannot be recorded is not acknowledged, nothing follows from it, and given again it settles once") {
  rig r;
  r.two_evaluators(0);
  r.settle("a", 0);
  r.kv->fail_next_writes(1);
  CHECK_FALSE(r.core->on_result({"measure/a", false, {}, "worker died", "ev1"}, 10 * ms).ok());
  r.take();
  r.tick(20 * ms);  // memory went back to the ledger: no settlement to publish or reply
  CHECK(r.out.acks.empty());
  CHECK(r.out.publish.empty());
  CHECK(r.out.replies.empty());
  r.result("measure/a", {}, "ev1", 30 * ms, false);
  auto* s = r.settlement("a");
  CHECK(s->status() == m::SettlementStatus::Failure);
  CHECK(s->settled_ns() == 30 * ms);
  CHECK(r.out.acks == std::vector<std::string>{"measure/a"});
  CHECK(r.out.publish.size() == 1);
}

TEST_CASE("a settlement whose publication cannot be recorded is published once while the ledger refuses") {
  rig r;
  r.settle("a", 0);
  r.result("measure/a", measurement("a", 1.5, "ev1"), "ev1", 10 * ms);
  REQUIRE(r.out.publish.size() == 1);
  // A restarted referee finds it unpublished (as a crash before the store would leave it).
  candidate_ledger ledger(r.kv);
  auto rec = *ledger.get("a");
  rec->published = false;
  REQUIRE(ledger.put(*rec).ok());
  r.clear();
  r.kv->fail_next_writes(1000);
  r.start();
  CHECK_FALSE(r.core->recover(20 * ms).ok());
  r.take();
  for (int i = 0; i < 5; ++i) {
    CHECK_FALSE(r.core->on_tick((30 + i) * ms).ok());
    r.take();
  }
  CHECK(r.out.publish.size() == 1);
  r.kv->fail_next_writes(0);
  r.tick(40 * ms);
  CHECK(r.out.publish.size() == 1);
  CHECK((*ledger.get("a"))->published);
}

// [referee] reuse_identical (measurement_reuse.hpp).
TEST_CASE("identical code is measured once: copies take the measurement, wait for it, and say whose it is") {
  rig r;
  r.options.reuse_identical = true;
  r.start();
  r.two_evaluators(0);
  const std::string gelu = "class ModelNew: gelu", relu = "class ModelNew: relu";
  r.settle("a", 0, gelu);
  r.settle("b", 1 * ms, gelu);  // submitted while a is measured: waits for a's measurement
  r.settle("c", 2 * ms, relu);  // other code: its own job
  CHECK(r.has_job("measure/a"));
  CHECK_FALSE(r.has_job("measure/b"));
  CHECK(r.has_job("measure/c"));
  r.result("measure/a", measurement("a", 1.5, "ev1"), "ev1", 10 * ms);
  CHECK(r.settlement("a")->reward() == doctest::Approx(1.5));
  CHECK(r.settlement("b")->reward() == doctest::Approx(1.5));  // at once, not at the next tick
  CHECK(str(r.settlement("b")->reason()).find("the measurement of identical candidate a") != std::string_view::npos);
  CHECK(str(r.settlement("a")->reason()).find("identical") == std::string_view::npos);
  r.settle("d", 20 * ms, gelu);  // after a settled: takes it at once
  CHECK_FALSE(r.has_job("measure/d"));
  CHECK(r.settlement("d")->reward() == doctest::Approx(1.5));
  // The same code under another task is that task's own.
  REQUIRE(r.core->on_settle(candidate_envelope("e", "other-task", gelu, "client"), 30 * ms).ok());
  r.take();
  CHECK(r.has_job("measure/e"));
  // Each copy is still settled for itself: one Settlement event each for
  // a, b and d (c and e wait for their measure jobs).
  CHECK(r.out.publish.size() == 3);
}

TEST_CASE("a measurement a busy machine can cause is not reused: the next copy is measured and serves the rest") {
  for (auto status : {m::EvalStatus::Void, m::EvalStatus::Timeout, m::EvalStatus::Crashed, m::EvalStatus::RuntimeError}) {
    CAPTURE(m::EnumNameEvalStatus(status));
    rig r;
    r.options.reuse_identical = true;
    r.start();
    r.settle("a", 0);
    r.settle("b", 1 * ms);
    r.result("measure/a", measurement("a", 0, "ev1", status), "ev1", 10 * ms);
    CHECK(r.settlement("a")->reward() == 0);
    REQUIRE(r.has_job("measure/b"));  // b measured for itself
    r.settle("c", 11 * ms);
    CHECK_FALSE(r.has_job("measure/c"));  // c waits for b, which now serves the code
    r.result("measure/b", measurement("b", 1.2, "ev1"), "ev1", 20 * ms);
    CHECK(r.settlement("b")->reward() == doctest::Approx(1.2));
    CHECK(r.settlement("c")->reward() == doctest::Approx(1.2));
    CHECK(str(r.settlement("c")->reason()).find("identical candidate b") != std::string_view::npos);
  }
  // A measure job that failed outright leaves nothing to reuse either.
  rig r;
  r.options.reuse_identical = true;
  r.start();
  r.settle("a", 0);
  r.settle("b", 1 * ms);
  r.result("measure/a", {}, "", 10 * ms, false);
  CHECK(r.settlement("a")->status() == m::SettlementStatus::Failure);
  CHECK(r.has_job("measure/b"));
}

TEST_CASE("failures and hacks of the same bytes are reused, and a reused hack is recorded for each copy") {
  for (auto status : {m::EvalStatus::Incorrect, m::EvalStatus::CompileError, m::EvalStatus::Hack}) {
    CAPTURE(m::EnumNameEvalStatus(status));
    rig r;
    r.options.reuse_identical = true;
    r.start();
    r.settle("a", 0);
    r.result("measure/a", measurement("a", 0, "ev1", status), "ev1", 10 * ms);
    r.settle("b", 20 * ms);
    CHECK_FALSE(r.has_job("measure/b"));
    CHECK(r.settlement("b")->status() == r.settlement("a")->status());
    CHECK(r.settlement("b")->reward() == 0);
    CHECK(r.hacks.size() == (status == m::EvalStatus::Hack ? 2u : 0u));
  }
}

TEST_CASE("a copy waiting for another's measurement survives a restart, and off measures every copy") {
  rig r;
  r.options.reuse_identical = true;
  r.start();
  r.settle("a", 0);
  r.settle("b", 1 * ms);
  r.clear();
  r.restart(5 * ms);
  CHECK(r.has_job("measure/a"));  // asked again
  CHECK_FALSE(r.has_job("measure/b"));  // still waits for a
  r.result("measure/a", measurement("a", 1.3, "ev1"), "ev1", 10 * ms);
  CHECK(r.settlement("b")->reward() == doctest::Approx(1.3));

  rig off;  // reuse_identical = false
  off.settle("a", 0);
  off.settle("b", 1 * ms);
  CHECK(off.has_job("measure/a"));
  CHECK(off.has_job("measure/b"));
}
