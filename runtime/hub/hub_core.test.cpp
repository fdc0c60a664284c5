// The hub's protocol, message by message, with a hand-moved clock.
#include <doctest/doctest.h>

#include "runtime/hub/hub_core.hpp"
#include "storage/memory_store.hpp"

using namespace crucible;
using namespace crucible::hub;
using namespace std::chrono_literals;
namespace m = crucible::msg;
using messages::envelope_writer;
using messages::str;

namespace {

bus::frame from(const std::string& peer, bus::bytes data) { return {bus::channel::direct, peer, {}, std::move(data)}; }

bus::bytes reg(const std::string& name, std::vector<std::string> kinds, std::uint32_t slots,
               std::vector<std::string> held = {}, std::uint64_t last_seq = 0) {
  envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<flatbuffers::Offset<flatbuffers::String>> k, h;
  for (auto& s : kinds) k.push_back(fbb.CreateString(s));
  for (auto& s : held) h.push_back(fbb.CreateString(s));
  auto kv = fbb.CreateVector(k);
  auto hv = fbb.CreateVector(h);
  auto r = m::CreateRegister(fbb, kinds.empty() ? m::Role::Client : m::Role::Worker, fbb.CreateString(name),
                             fbb.CreateString("node"), 1, kv, slots, hv, last_seq);
  return w.finish(r, name, name);
}

bus::bytes credit(const std::string& name, std::uint32_t free, std::uint64_t last_seq) {
  envelope_writer w;
  return w.finish(m::CreateCredit(w.fbb(), free, last_seq), name);
}

bus::bytes submit(const std::string& name, const std::string& id, const std::string& kind = "echo") {
  envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<std::uint8_t> payload{1, 2, 3};
  auto s = m::CreateJobSubmit(fbb, fbb.CreateString(id), fbb.CreateString(kind), fbb.CreateVector(payload));
  return w.finish(s, name, id);
}

bus::bytes job_result(const std::string& worker, const std::string& id, std::uint32_t free, std::uint64_t last_seq) {
  envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<std::uint8_t> payload{9};
  auto r = m::CreateJobResult(fbb, fbb.CreateString(id), m::JobStatus::Ok, fbb.CreateVector(payload),
                              fbb.CreateString(""), fbb.CreateString(worker), free, last_seq);
  return w.finish(r, worker, id);
}

bus::bytes client_ack(const std::string& name, const std::string& id) {
  envelope_writer w;
  auto& fbb = w.fbb();
  return w.finish(m::CreateJobResultAck(fbb, fbb.CreateString(id)), name, id);
}

// Messages of one kind sent to one peer, opened.
std::vector<const m::Envelope*> sent(const bus::outbox& out, const std::string& to, m::Payload kind) {
  std::vector<const m::Envelope*> found;
  for (auto& o : out)
    if (o.to == to) {
      auto env = messages::open(o.data);
      REQUIRE(env.ok());
      if ((*env)->payload_type() == kind) found.push_back(*env);
    }
  return found;
}

struct fixture {
  storage::memory_store kv;
  storage::memory_segments log;
  job_ledger ledger{kv, log};
  hub_options options;
  std::unique_ptr<hub_core> hub;
  clock::time_point now{};
  bus::outbox out;

  fixture() { restart(); }
  void restart() {
    hub = std::make_unique<hub_core>(options, ledger, 1);
    REQUIRE(hub->recover(now).ok());
  }
  // Delivers one message and returns what the hub sends in reply.
  bus::outbox& deliver(const std::string& peer, bus::bytes data) {
    hub->on_frame(from(peer, std::move(data)), now);
    REQUIRE(hub->finish_batch(now).ok());
    out = hub->take_outbox();
    return out;
  }
  void take_and_forget() { out = hub->take_outbox(); }
  bus::outbox& tick(std::chrono::milliseconds dt) {
    now += dt;
    hub->on_tick(now);
    REQUIRE(hub->finish_batch(now).ok());
    out = hub->take_outbox();
    return out;
  }
};

}  // namespace

TEST_CASE("a job goes only to a worker that asked for it") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  f.deliver("w", reg("w", {"echo"}, 0));
  auto& out = f.deliver("c", submit("c", "j1"));
  CHECK(sent(out, "c", m::Payload::JobAccepted).size() == 1);
  CHECK(sent(out, "w", m::Payload::Job).empty());
  auto& out2 = f.deliver("w", credit("w", 1, 0));
  auto jobs = sent(out2, "w", m::Payload::Job);
  REQUIRE(jobs.size() == 1);
  CHECK(str(jobs[0]->payload_as_Job()->job_id()) == "j1");
  CHECK(jobs[0]->payload_as_Job()->attempt() == 1);
}

TEST_CASE("a worker gets at most as many jobs as it has free slots") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  for (int i = 0; i < 5; ++i) f.deliver("c", submit("c", "j" + std::to_string(i)));
  auto& out = f.deliver("w", reg("w", {"echo"}, 2));
  CHECK(sent(out, "w", m::Payload::Job).size() == 2);
  // Repeating its credit before it has seen those jobs changes nothing.
  CHECK(sent(f.deliver("w", credit("w", 2, 0)), "w", m::Payload::Job).empty());
  // Once it has seen both (last_seq 2) and one slot is free again: one more.
  CHECK(sent(f.deliver("w", job_result("w", "j0", 1, 2)), "w", m::Payload::Job).size() == 1);
}

TEST_CASE("a worker only gets the kinds of job it serves") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  f.deliver("c", submit("c", "m1", "measure"));
  CHECK(sent(f.deliver("w", reg("w", {"echo"}, 4)), "w", m::Payload::Job).empty());
  CHECK(sent(f.deliver("e", reg("e", {"measure"}, 4)), "e", m::Payload::Job).size() == 1);
}

TEST_CASE("a result reaches the submitter once, the worker is acknowledged when the submitter is") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  f.deliver("w", reg("w", {"echo"}, 1));
  f.deliver("c", submit("c", "j1"));
  auto& out = f.deliver("w", job_result("w", "j1", 1, 1));
  CHECK(sent(out, "c", m::Payload::JobResult).size() == 1);
  CHECK(sent(out, "w", m::Payload::JobResultAck).empty());  // the worker still holds the only durable copy
  CHECK(f.hub->counters().completed == 1);
  auto& acked = f.deliver("c", client_ack("c", "j1"));
  CHECK(sent(acked, "w", m::Payload::JobResultAck).size() == 1);
}

TEST_CASE("the hub's line names the job unfinished longest, where it stands and for how long") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  CHECK(f.hub->describe(f.now).find("0 unfinished; received") != std::string::npos);
  f.deliver("c", submit("c", "j1"));
  f.now += 5s;  // (no tick, here and below: nobody is declared dead)
  f.deliver("c", submit("c", "j2"));
  CHECK(f.hub->describe(f.now).find("2 unfinished (the oldest: j1 of kind echo, queued, for 5 s)") != std::string::npos);
  f.deliver("w", reg("w", {"echo"}, 1));
  f.now += 20s;
  // A worker that holds a job and does not answer: what a stalled run shows.
  CHECK(f.hub->describe(f.now).find("(the oldest: j1 of kind echo, held by 'w', for 25 s)") != std::string::npos);
  f.deliver("w", job_result("w", "j1", 1, 1));
  CHECK(f.hub->describe(f.now).find("(the oldest: j1 of kind echo, answered, not yet acknowledged by 'c', for 25 s)") !=
        std::string::npos);
  f.deliver("c", client_ack("c", "j1"));
  CHECK(f.hub->describe(f.now).find("1 unfinished (the oldest: j2 of kind echo, held by 'w', for 20 s)") !=
        std::string::npos);
}

TEST_CASE("a re-delivered result changes nothing but puts the result in the ledger and frees the worker") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  f.deliver("w", reg("w", {"echo"}, 1));
  f.deliver("c", submit("c", "j1"));
  f.deliver("w", job_result("w", "j1", 1, 1));
  auto& again = f.deliver("w", job_result("w", "j1", 1, 1));
  CHECK(sent(again, "c", m::Payload::JobResult).empty());
  CHECK(sent(again, "w", m::Payload::JobResultAck).size() == 1);
  CHECK(f.hub->counters().completed == 1);
  CHECK(f.hub->counters().duplicates == 1);
  // Now the ledger holds it: a restarted hub hands it to the client without the worker.
  f.restart();
  CHECK(sent(f.deliver("c", reg("c", {}, 0)), "c", m::Payload::JobResult).size() == 1);
}

TEST_CASE("a duplicate submit is answered without running the job again") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  f.deliver("w", reg("w", {"echo"}, 4));
  f.deliver("c", submit("c", "j1"));
  auto& dup = f.deliver("c", submit("c", "j1"));
  auto acc = sent(dup, "c", m::Payload::JobAccepted);
  REQUIRE(acc.size() == 1);
  CHECK(acc[0]->payload_as_JobAccepted()->duplicate());
  CHECK(sent(dup, "w", m::Payload::Job).empty());
  f.deliver("w", job_result("w", "j1", 4, 1));
  // After the result, a duplicate submit gets the stored result back.
  CHECK(sent(f.deliver("c", submit("c", "j1")), "c", m::Payload::JobResult).size() == 1);
  // After the client's ack, a late duplicate is recognised from the ledger
  // and answered with a failure that says so: a client that reused the id
  // hears why instead of waiting forever.
  f.deliver("c", client_ack("c", "j1"));
  auto& late = f.deliver("c", submit("c", "j1"));
  CHECK(sent(late, "w", m::Payload::Job).empty());
  auto answer = sent(late, "c", m::Payload::JobResult);
  REQUIRE(answer.size() == 1);
  CHECK(answer[0]->payload_as_JobResult()->status() == m::JobStatus::Failed);
  CHECK(std::string(answer[0]->payload_as_JobResult()->error()->c_str()).find("single-use") != std::string::npos);
  CHECK(f.hub->counters().dispatched == 1);
}

TEST_CASE("jobs of a silent worker are re-queued to another worker") {
  fixture f;
  f.options.dead_after = 1000ms;
  f.restart();
  f.deliver("c", reg("c", {}, 0));
  f.deliver("a", reg("a", {"echo"}, 1));
  f.deliver("c", submit("c", "j1"));
  f.deliver("b", reg("b", {"echo"}, 1));
  f.now += 600ms;
  f.deliver("b", credit("b", 1, 0));
  f.deliver("c", credit("c", 0, 0));
  auto& out = f.tick(600ms);  // a silent for 1200 ms, b for 600 ms
  auto jobs = sent(out, "b", m::Payload::Job);
  REQUIRE(jobs.size() == 1);
  CHECK(str(jobs[0]->payload_as_Job()->job_id()) == "j1");
  CHECK(jobs[0]->payload_as_Job()->attempt() == 2);
  CHECK(f.hub->counters().requeued == 1);
  CHECK(f.hub->live_workers() == 1);
}

TEST_CASE("a dispatch the worker never saw is sent again") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  f.deliver("w", reg("w", {"echo"}, 2));
  f.deliver("c", submit("c", "j1"));  // seq 1: lost on the way
  f.deliver("c", submit("c", "j2"));  // seq 2: arrived
  // The worker has seen seq 2, holds only j2: j1 was lost.
  envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<flatbuffers::Offset<flatbuffers::String>> held{fbb.CreateString("j2")};
  auto hb = m::CreateHeartbeat(fbb, 1, 1, 2, fbb.CreateVector(held));
  auto jobs = sent(f.deliver("w", w.finish(hb, "w")), "w", m::Payload::Job);
  REQUIRE(jobs.size() == 1);
  CHECK(str(jobs[0]->payload_as_Job()->job_id()) == "j1");
}

TEST_CASE("a worker silent since a dispatch it never confirmed gets no more jobs once that job is re-queued") {
  fixture f;
  f.options.dead_after = 10000ms;  // silent, not yet dead
  f.restart();
  f.deliver("c", reg("c", {}, 0));
  f.deliver("a", reg("a", {"echo"}, 1));
  REQUIRE(sent(f.deliver("c", submit("c", "j1")), "a", m::Payload::Job).size() == 1);  // never confirmed
  f.deliver("b", reg("b", {"echo"}, 1));
  f.now += f.options.redispatch_after;
  f.deliver("b", credit("b", 1, 0));
  f.deliver("c", credit("c", 0, 0));
  // j1 goes to b; a, which never reported its slot free, gets it back only
  // when it reports again, not from the re-queue.
  auto& out = f.tick(1ms);
  CHECK(sent(out, "a", m::Payload::Job).empty());
  auto jobs = sent(out, "b", m::Payload::Job);
  REQUIRE(jobs.size() == 1);
  CHECK(str(jobs[0]->payload_as_Job()->job_id()) == "j1");
  CHECK(f.hub->counters().requeued == 1);
  CHECK(sent(f.deliver("c", submit("c", "j2")), "a", m::Payload::Job).empty());
  // Once a reports (a free slot, and the highest sequence it has seen:
  // none), it is a worker with credit again.
  CHECK(sent(f.deliver("a", credit("a", 1, 0)), "a", m::Payload::Job).size() == 1);
}

TEST_CASE("a message from a peer that has not registered is refused with UnknownPeer") {
  fixture f;
  auto rej = sent(f.deliver("x", credit("x", 1, 0)), "x", m::Payload::Reject);
  REQUIRE(rej.size() == 1);
  CHECK(rej[0]->payload_as_Reject()->code() == m::RejectCode::UnknownPeer);
}

TEST_CASE("malformed and spoofed messages are counted and dropped and the hub keeps serving") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  CHECK(f.deliver("c", bus::bytes{1, 2, 3}).empty());
  CHECK(f.deliver("c", bus::bytes(100000, 0xff)).empty());
  CHECK(f.deliver("c", submit("mallory", "j1")).empty());  // sender is not the connection
  CHECK(f.hub->counters().malformed == 3);
  CHECK(sent(f.deliver("c", submit("c", "j1")), "c", m::Payload::JobAccepted).size() == 1);
}

TEST_CASE("a valid message of a kind the endpoint does not take is refused") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  envelope_writer w;
  auto& fbb = w.fbb();
  auto s = m::CreateSettlement(fbb, fbb.CreateString("cand"));
  auto rej = sent(f.deliver("c", w.finish(s, "c")), "c", m::Payload::Reject);
  REQUIRE(rej.size() == 1);
  CHECK(rej[0]->payload_as_Reject()->code() == m::RejectCode::UnexpectedKind);
}

TEST_CASE("an accepted job survives a hub restart and runs after the recovery grace") {
  fixture f;
  f.options.recovery_grace = 500ms;
  f.restart();
  f.deliver("c", reg("c", {}, 0));
  f.deliver("c", submit("c", "j1"));
  f.restart();  // a new hub on the same ledger, as after kill -9
  CHECK(f.hub->unfinished_jobs() == 1);
  f.deliver("w", reg("w", {"echo"}, 1));
  CHECK(sent(f.out, "w", m::Payload::Job).empty());  // waits for old workers to claim it
  auto jobs = sent(f.tick(600ms), "w", m::Payload::Job);
  REQUIRE(jobs.size() == 1);
  CHECK(str(jobs[0]->payload_as_Job()->job_id()) == "j1");
}

TEST_CASE("after a hub restart a worker that still holds a job keeps it") {
  fixture f;
  f.options.recovery_grace = 500ms;
  f.restart();
  f.deliver("c", reg("c", {}, 0));
  f.deliver("a", reg("a", {"echo"}, 1));
  f.deliver("c", submit("c", "j1"));
  f.restart();
  f.deliver("a", reg("a", {"echo"}, 0, {"j1"}, 1));
  f.deliver("b", reg("b", {"echo"}, 1));
  CHECK(sent(f.tick(600ms), "b", m::Payload::Job).empty());
  auto& out = f.deliver("a", job_result("a", "j1", 1, 1));
  CHECK(sent(out, "c", m::Payload::JobResult).size() == 1);
}

TEST_CASE("a result the client never acknowledged survives a hub restart: the worker still holds it") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  f.deliver("w", reg("w", {"echo"}, 1));
  f.deliver("c", submit("c", "j1"));
  f.deliver("w", job_result("w", "j1", 1, 1));  // the client never got it; the worker was not acknowledged
  f.restart();
  f.deliver("c", reg("c", {}, 0));
  f.deliver("w", reg("w", {"echo"}, 1, {"j1"}));  // claims it
  auto& out = f.deliver("w", job_result("w", "j1", 1, 1));
  CHECK(sent(out, "c", m::Payload::JobResult).size() == 1);
  CHECK(f.hub->counters().requeued == 0);
}

TEST_CASE("a failing ledger commit is reported, so the caller can withhold the acknowledgements") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  f.hub->on_frame(from("c", submit("c", "j1")), f.now);
  f.log.fail_next_appends(1);  // the submit record goes to the job log
  CHECK_FALSE(f.hub->finish_batch(f.now).ok());
  f.take_and_forget();
  f.deliver("w", reg("w", {"echo"}, 1));
  f.deliver("c", submit("c", "j2"));
  f.deliver("w", job_result("w", "j2", 1, 1));
  f.hub->on_frame(from("c", client_ack("c", "j2")), f.now);
  f.kv.fail_next_writes(1);  // the acknowledgement marker goes to the kv store
  CHECK_FALSE(f.hub->finish_batch(f.now).ok());
}

TEST_CASE("while the ledger cannot write, acceptances wait for it and new jobs are refused with its error") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  f.hub->on_frame(from("c", submit("c", "j1")), f.now);
  f.log.fail_next_appends(1);
  CHECK_FALSE(f.hub->finish_batch(f.now).ok());
  f.take_and_forget();
  CHECK(sent(f.out, "c", m::Payload::JobAccepted).empty());
  auto& refused = f.deliver("c", submit("c", "j2"));  // the ledger is failing when j2 arrives
  auto rejects = sent(refused, "c", m::Payload::Reject);
  REQUIRE(rejects.size() == 1);
  CHECK(rejects[0]->payload_as_Reject()->code() == m::RejectCode::Overloaded);
  CHECK(str(rejects[0]->payload_as_Reject()->reason()).find("injected torn append") != std::string_view::npos);
  // That batch wrote j1: its resend is accepted, and j2 is taken now.
  CHECK(sent(f.deliver("c", submit("c", "j1")), "c", m::Payload::JobAccepted).size() == 1);
  CHECK(sent(f.deliver("c", submit("c", "j2")), "c", m::Payload::JobAccepted).size() == 1);
  f.restart();
  CHECK(f.hub->unfinished_jobs() == 2);
}

TEST_CASE("a job that excludes a worker waits for another worker") {
  fixture f;
  f.deliver("c", reg("c", {}, 0));
  f.deliver("a", reg("a", {"verify"}, 1));
  envelope_writer w;
  auto& fbb = w.fbb();
  auto s = m::CreateJobSubmit(fbb, fbb.CreateString("v1"), fbb.CreateString("verify"), 0, fbb.CreateString("a"));
  CHECK(sent(f.deliver("c", w.finish(s, "c", "v1")), "a", m::Payload::Job).empty());
  auto jobs = sent(f.deliver("b", reg("b", {"verify"}, 1)), "b", m::Payload::Job);
  REQUIRE(jobs.size() == 1);
  CHECK(str(jobs[0]->payload_as_Job()->job_id()) == "v1");
}

TEST_CASE("registrations and departures are published as PeerEvents") {
  fixture f;
  f.options.dead_after = 1000ms;
  f.restart();
  auto& out = f.deliver("d", reg("d", {"detect:static"}, 4));
  auto events = sent(out, "PeerEvent", m::Payload::PeerEvent);
  REQUIRE(events.size() == 1);
  CHECK(events[0]->payload_as_PeerEvent()->joined());
  CHECK(str(events[0]->payload_as_PeerEvent()->name()) == "d");
  auto left = sent(f.tick(1500ms), "PeerEvent", m::Payload::PeerEvent);
  REQUIRE_FALSE(left.empty());
  CHECK_FALSE(left.back()->payload_as_PeerEvent()->joined());
}
