// The referee with real processes: a hub (with its referee) and CPU
// evaluators on loopback. Verification (layer 7) end to end on two core
// sets, a lying second evaluator voiding a candidate, and exactly-once
// settlement when the hub (and the referee in it) is killed with kill -9.
#include <doctest/doctest.h>

#include <atomic>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>
#include <zmq.hpp>

#include "actors/referee/referee_wire.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/node/caf_types.hpp"
#include "runtime/node/job_runner.hpp"
#include "runtime/node/worker_actor.hpp"
#include "tests/support/process.hpp"
#include "tests/support/test_worker.hpp"

using namespace crucible;
using namespace crucible::testing;
using namespace std::chrono_literals;
using messages::str;

namespace {

const std::string tasks = std::string(CRUCIBLE_SOURCE_DIR) + "/configs/tasks";

// Fast liveness, and verification of anything above 1.05x so that the CPU
// task set's faster variants (1.2x to 1.4x) are verified. agree_within is
// wider than the default because the two cores of a shared 2-core VM
// disagree by more than 10% on a loaded day (docs/benchmarks.md): the
// disagreement test uses a lie far beyond it.
std::string write_config(const std::string& dir, const std::string& referee) {
  std::string path = dir + "/referee.toml";
  std::ofstream(path) << "[log]\nlevel = \"info\"\n"
                         "[hub]\nheartbeat_ms = 100\ndead_after_ms = 1500\nrecovery_grace_ms = 800\n"
                         "redispatch_after_ms = 1500\n"
                         "[bus]\nheartbeat_ms = 100\ndead_after_ms = 1500\nretry_ms = 300\naccepted_retry_ms = 600\n"
                         "[referee]\nverify_above = 1.05\nagree_within = 0.3\nsecond_device_wait_ms = 20000\n"
                      << referee;
  return path;
}

struct cluster {
  std::string dir;
  std::string config;
  int port = pick_port();
  std::string address = "tcp://127.0.0.1:" + std::to_string(port);

  cluster(const std::string& name, const std::string& referee = "")
      : dir(temp_dir(name)), config(write_config(dir, referee)) {}

  std::unique_ptr<child> hub(const std::string& log) {
    auto c = std::make_unique<child>(crucible_binary(), std::vector<std::string>{"hub", "--config", config, "--bind",
                                                                                address, "--ledger", dir + "/ledger"},
                                     dir + "/" + log);
    REQUIRE_MESSAGE(wait_for_text(dir + "/" + log, "hub listening", 30s), read_file(dir + "/" + log));
    return c;
  }
  // An evaluator pinned to one core (its core set) with taskset.
  std::unique_ptr<child> evaluator(const std::string& name, int core) {
    auto c = std::make_unique<child>(
        "/usr/bin/taskset",
        std::vector<std::string>{"-c", std::to_string(core), crucible_binary(), "evaluator", "--config", config,
                                 "--connect", address, "--name", name, "--tasks", tasks, "--protocol", "quick"},
        dir + "/" + name + ".log");
    REQUIRE(wait_for_text(dir + "/" + name + ".log", "registered with hub", 20s));
    return c;
  }
};

node::job_spec settle_job(const std::string& task, const std::string& variant) {
  std::string id = task + "/" + variant;
  std::ifstream in(tasks + "/" + id + ".py");
  std::stringstream code;
  code << in.rdbuf();
  return {"settle/" + id, "settle", referee::candidate_envelope(id, task, code.str(), "test")};
}

// Settles jobs through the hub from this process; returns each result's Settlement bytes by candidate id.
std::map<std::string, bus::bytes> settle(const cluster& c, const std::vector<node::job_spec>& jobs,
                                         const std::string& name, std::chrono::seconds timeout) {
  auto transport = bus::connect_peer_transport(c.address, name);
  REQUIRE(transport.ok());
  bus::peer_options client;
  client.name = name;
  client.retry = 300ms;
  client.accepted_retry = 600ms;
  client.heartbeat = 100ms;
  client.dead_after = 1500ms;
  node::job_run_options run;
  run.timeout = timeout;
  run.keep_results = true;
  auto report = node::run_jobs(**transport, client, jobs, run);
  CHECK(report.missing == 0);
  std::map<std::string, bus::bytes> out;
  for (auto& r : report.results) {
    CHECK_MESSAGE(r.status == msg::JobStatus::Ok, r.id << ": " << r.error);
    out[r.id.substr(7)] = r.payload;
  }
  return out;
}

const msg::Settlement* settlement_of(const bus::bytes& b) { return referee::payload_of<msg::Settlement>(b); }

// A second evaluator that lies: it serves verify:cpu jobs only and reports
// ten times the speedup anyone could measure.
class lying_evaluator final : public node::job_handler {
 public:
  void run(const bus::worker_session::job_request& job, done_fn done) override {
    auto* c = referee::payload_of<msg::Candidate>(job.payload);
    if (!c) return done(msg::JobStatus::Failed, {}, "not a candidate");
    done(msg::JobStatus::Ok,
         referee::simple_measurement(std::string(str(c->candidate_id())), std::string(str(c->task_id())),
                                     msg::EvalStatus::Ok, 13.0, "liar", "cpu", true),
         {});
  }
};

// Every Settlement event on the hub's event endpoint, by candidate id.
// When the listener's connection to a hub last completed its handshake
// (wall clock, ns): events a hub published before then never reach it, as
// ZeroMQ's PUB drops for a subscriber not yet connected.
struct handshake_clock : zmq::monitor_t {
  std::atomic<std::int64_t> last_ns{0};
  void on_event_handshake_succeeded(const zmq_event_t&, const char*) override { last_ns = messages::now_ns(); }
};

struct settlement_listener {
  zmq::context_t ctx;
  zmq::socket_t sub{ctx, zmq::socket_type::sub};
  handshake_clock connected;
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::map<std::string, std::vector<bus::bytes>> seen;  // GUARDED_BY(mu)
  std::thread thread;

  explicit settlement_listener(int port) {
    sub.set(zmq::sockopt::subscribe, "Settlement");
    sub.set(zmq::sockopt::rcvtimeo, 100);
    connected.init(sub, "inproc://settlement-listener-monitor", ZMQ_EVENT_HANDSHAKE_SUCCEEDED);
    sub.connect("tcp://127.0.0.1:" + std::to_string(port + 2));
    thread = std::thread([this] {
      while (!stop) {
        while (connected.check_event(0)) {
        }
        zmq::message_t topic, data;
        if (!sub.recv(topic)) continue;
        if (!topic.more() || !sub.recv(data)) continue;
        bus::bytes b(static_cast<const std::uint8_t*>(data.data()),
                     static_cast<const std::uint8_t*>(data.data()) + data.size());
        auto* s = settlement_of(b);
        if (!s) continue;
        std::lock_guard lock(mu);
        seen[std::string(str(s->candidate_id()))].push_back(std::move(b));
      }
    });
  }
  ~settlement_listener() {
    stop = true;
    thread.join();
  }
};

}  // namespace

TEST_CASE("verification end to end: a speedup is verified on a second evaluator on another core set") {
  cluster c("referee-verify");
  auto hub = c.hub("hub.log");
  auto a = c.evaluator("ev-a", 0);
  auto b = c.evaluator("ev-b", 1);
  auto got = settle(c, {settle_job("cpu/gelu_tanh", "faster")}, "client", 240s);
  REQUIRE(got.count("cpu/gelu_tanh/faster"));
  auto* s = settlement_of(got["cpu/gelu_tanh/faster"]);
  REQUIRE(s);
  CAPTURE(str(s->reason()));
  CHECK(s->status() == msg::SettlementStatus::Success);
  CHECK(s->verified());
  CHECK(s->reward() > 1.05);
  CHECK(str(s->reason()).find("verified: ") == 0);
  // Each evaluator ran one of the two jobs.
  CHECK(count_text(c.dir + "/ev-a.log", "ok reward=") + count_text(c.dir + "/ev-b.log", "ok reward=") == 2);
}

TEST_CASE("an injected disagreement: a lying second evaluator voids the candidate") {
  cluster c("referee-liar");
  auto hub = c.hub("hub.log");
  auto a = c.evaluator("ev-a", 0);
  caf::actor_system_config cfg;
  node::configure(cfg, 2);
  caf::actor_system sys{cfg};
  auto worker = spawn_test_worker(sys, c.address, "liar", msg::Role::Evaluator, {"verify:cpu"},
                                  std::make_shared<lying_evaluator>());
  REQUIRE(worker.ok());
  REQUIRE(wait_for_text(c.dir + "/hub.log", "registered Evaluator 'liar'", 10s));
  auto got = settle(c, {settle_job("cpu/gelu_tanh", "faster")}, "client", 240s);
  auto* s = settlement_of(got["cpu/gelu_tanh/faster"]);
  REQUIRE(s);
  CAPTURE(str(s->reason()));
  CHECK(s->status() == msg::SettlementStatus::Void);
  CHECK(s->reward() == 0.0);
  CHECK_FALSE(s->verified());
  CHECK(str(s->reason()).find("on liar") != std::string_view::npos);
}

TEST_CASE("exactly-once settlement when the hub and its referee are killed with kill -9 mid-run") {
  cluster c("referee-kill");
  auto hub = c.hub("hub1.log");
  auto a = c.evaluator("ev-a", 0);
  settlement_listener listener(c.port);
  std::vector<node::job_spec> jobs;
  for (auto v : {"incorrect", "not_compiling", "crashing", "equal"}) jobs.push_back(settle_job("cpu/gelu_tanh", v));
  for (auto v : {"incorrect", "not_compiling"}) jobs.push_back(settle_job("cpu/scale_relu", v));
  std::map<std::string, bus::bytes> got;
  std::thread client([&] { got = settle(c, jobs, "client", 240s); });
  bool settled_some = wait_for_text(c.dir + "/hub1.log", "referee settled", 120s, 2);
  hub->kill9();
  auto before = count_text(c.dir + "/hub1.log", "referee settled");
  auto hub2 = c.hub("hub2.log");
  client.join();
  REQUIRE(settled_some);
  CHECK(before < static_cast<int>(jobs.size()));  // the kill came mid-run
  CHECK(count_text(c.dir + "/hub2.log", "referee resumes") == 1);
  REQUIRE(got.size() == jobs.size());
  std::this_thread::sleep_for(300ms);  // the last events in flight to the listener
  std::lock_guard lock(listener.mu);
  for (auto& j : jobs) {
    std::string id = j.id.substr(7);
    CAPTURE(id);
    // Settled once across both incarnations of the referee...
    CHECK(count_text(c.dir + "/hub1.log", "referee settled " + id + ":") +
              count_text(c.dir + "/hub2.log", "referee settled " + id + ":") ==
          1);
    // ...and every copy of its event is that one settlement, byte for byte.
    for (auto& copy : listener.seen[id]) CHECK(copy == got[id]);
    // Published by the second hub: seen, unless it was settled before the
    // listener's connection to that hub was up (its subscription reaches
    // the hub a moment after the handshake: 200 ms allowed for that).
    auto* s = settlement_of(got[id]);
    REQUIRE(s);
    bool after_reconnect = static_cast<std::int64_t>(s->settled_ns()) > listener.connected.last_ns + 200 * 1'000'000;
    if (count_text(c.dir + "/hub2.log", "referee settled " + id + ":") == 1 && after_reconnect)
      CHECK(listener.seen[id].size() >= 1);
  }
}

TEST_CASE("crucible referee as its own process settles for a hub that runs none, crucible settle prints it") {
  cluster c("referee-role", "enabled = false\n");
  auto hub = c.hub("hub.log");
  child referee(crucible_binary(),
                {"referee", "--config", c.config, "--connect", c.address, "--name", "ref-1", "--ledger",
                 c.dir + "/referee-ledger"},
                c.dir + "/referee.log");
  REQUIRE(wait_for_text(c.dir + "/hub.log", "registered Referee 'ref-1'", 10s));
  CHECK(count_text(c.dir + "/hub.log", "registered Referee 'referee'") == 0);  // none inside the hub
  auto a = c.evaluator("ev-a", 0);
  child settle(crucible_binary(),
               {"settle", "--connect", c.address, "--task", "cpu/scale_relu", "--candidate",
                tasks + "/cpu/scale_relu/incorrect.py", "--id", "wrong-1", "--timeout-s", "120"},
               c.dir + "/settle.out");
  REQUIRE(settle.wait(150s) == 0);
  auto out = read_file(c.dir + "/settle.out");
  auto line = nlohmann::json::parse(out.substr(out.find('{')));
  CHECK(line["candidate"] == "wrong-1");
  CHECK(line["status"] == "Failure");
  CHECK(line["reward"] == 0.0);
  CHECK(count_text(c.dir + "/referee.log", "referee settled wrong-1: Failure") == 1);
}
