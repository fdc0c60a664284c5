// The whole protocol (client, hub, workers) over the in-memory bus with
// faults: every job's result reaches the client exactly once, whatever is
// dropped, duplicated, delayed, cut off or restarted. Virtual time, no sleeps.
#include <doctest/doctest.h>

#include <map>
#include <memory>

#include "runtime/bus/client_session.hpp"
#include "runtime/bus/memory_transport.hpp"
#include "runtime/bus/worker_session.hpp"
#include "runtime/hub/hub_core.hpp"
#include "storage/memory_store.hpp"

using namespace crucible;
using namespace crucible::bus;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

peer_options fast(const std::string& name, std::uint32_t slots = 0) {
  peer_options o;
  o.name = name;
  o.node = "sim";
  o.slots = slots;
  o.job_kinds = slots ? std::vector<std::string>{"echo"} : std::vector<std::string>{};
  o.heartbeat = 100ms;
  o.dead_after = 600ms;
  o.retry = 300ms;
  o.accepted_retry = 1000ms;
  return o;
}

struct simulation {
  memory_network net;
  storage::memory_store kv;
  storage::memory_segments log;
  hub::job_ledger ledger{kv, log};
  hub::hub_options hub_opts;
  std::unique_ptr<hub::hub_core> hub;
  std::unique_ptr<transport> hub_end;
  std::uint64_t session = 1;

  struct worker_node {
    std::unique_ptr<worker_session> s;
    std::unique_ptr<transport> t;
    std::vector<std::pair<worker_session::job_request, clock_type::time_point>> running;
    bool alive = true;
  };
  std::map<std::string, worker_node> workers;
  std::map<std::string, int> executions;  // job id -> times a worker finished it

  client_session client{fast("client")};
  std::unique_ptr<transport> client_end;
  std::map<std::string, int> delivered;  // job id -> results the client got

  explicit simulation(fault_plan plan) : net(plan) {
    hub_opts.heartbeat = 100ms;
    hub_opts.dead_after = 600ms;
    hub_opts.recovery_grace = 300ms;
    hub_opts.redispatch_after = 600ms;
    start_hub();
    client_end = net.peer_end("client");
    client.start(net.now());
  }
  std::uint64_t completed_earlier = 0;  // by hubs before a restart
  void start_hub() {
    if (hub) completed_earlier += hub->counters().completed;
    hub = std::make_unique<hub::hub_core>(hub_opts, ledger, session++);
    hub_end = net.hub_end();
    REQUIRE(hub->recover(net.now()).ok());
  }
  void add_worker(const std::string& name, std::uint32_t slots) {
    worker_node n;
    n.s = std::make_unique<worker_session>(fast(name, slots));
    n.t = net.peer_end(name);
    n.s->start(net.now());
    workers[name] = std::move(n);
  }
  static void flush(transport& t, outbox out) {
    for (auto& o : out) {
      if (o.via == channel::direct) (void)t.send(o.to, o.data);
      else (void)t.publish(o.to, o.data);
    }
  }
  void step() {
    net.advance(10ms);
    auto now = net.now();
    std::vector<frame> frames;
    (void)hub_end->receive(frames, 100000, 0ms);
    for (auto& f : frames) hub->on_frame(f, now);
    hub->on_tick(now);
    REQUIRE(hub->finish_batch(now).ok());
    flush(*hub_end, hub->take_outbox());

    for (auto& [name, w] : workers) {
      if (!w.alive) continue;
      frames.clear();
      (void)w.t->receive(frames, 100000, 0ms);
      for (auto& f : frames) w.s->on_frame(f, now);
      for (auto& j : w.s->take_jobs()) w.running.push_back({std::move(j), now + 30ms});
      for (auto it = w.running.begin(); it != w.running.end();) {
        if (it->second <= now) {
          ++executions[it->first.id];
          w.s->complete(it->first.id, msg::JobStatus::Ok, it->first.payload, "", now);
          it = w.running.erase(it);
        } else {
          ++it;
        }
      }
      w.s->on_tick(now);
      flush(*w.t, w.s->take_outbox());
    }

    frames.clear();
    (void)client_end->receive(frames, 100000, 0ms);
    for (auto& f : frames) client.on_frame(f, now);
    client.on_tick(now);
    for (auto& r : client.take_results()) {
      ++delivered[r.id];
      CHECK(r.payload == bytes{static_cast<std::uint8_t>(r.id.size())});
    }
    flush(*client_end, client.take_outbox());
  }
  void submit(int n, const std::string& prefix = "job-") {
    for (int i = 0; i < n; ++i) {
      std::string id = prefix + std::to_string(i);
      bytes payload{static_cast<std::uint8_t>(id.size())};
      client.submit(id, "echo", payload, net.now());
    }
  }
  // Runs until the client has every result (with faults switched off after
  // `faulty` steps so that the run ends), at most max_steps.
  void run_until_done(int faulty, int max_steps = 20000) {
    for (int i = 0; i < max_steps && (client.outstanding() > 0 || i < faulty); ++i) {
      if (i == faulty) net.set_faults(false);
      step();
    }
  }
  void check_exactly_once(int n, const std::string& prefix = "job-") {
    CHECK(client.outstanding() == 0);
    for (int i = 0; i < n; ++i) {
      std::string id = prefix + std::to_string(i);
      CHECK_MESSAGE(delivered[id] == 1, id << " delivered " << delivered[id] << " times");
      CHECK_MESSAGE(executions[id] >= 1, id << " never ran");
    }
    // A hub counts each job's first result. A result that reached a hub but
    // not its client before that hub died is still held by its worker (the
    // worker is acknowledged only when the client is) and counts again at
    // the next hub: never fewer than n, and without a restart exactly n.
    if (completed_earlier == 0) CHECK(hub->counters().completed == static_cast<std::uint64_t>(n));
    CHECK(completed_earlier + hub->counters().completed >= static_cast<std::uint64_t>(n));
  }
};

}  // namespace

TEST_CASE("without faults every job runs once and its result arrives once") {
  simulation sim({.min_delay = 1ms, .max_delay = 1ms});
  sim.add_worker("w1", 2);
  sim.add_worker("w2", 2);
  for (int i = 0; i < 5; ++i) sim.step();
  sim.submit(100);
  sim.run_until_done(0);
  sim.check_exactly_once(100);
  for (auto& [id, n] : sim.executions) CHECK(n == 1);
  CHECK(sim.hub->counters().requeued == 0);
}

TEST_CASE("with drops, duplicates and reordering every result arrives exactly once") {
  for (std::uint64_t seed : {1, 2, 3}) {
    CAPTURE(seed);
    simulation sim({.drop = 0.1, .duplicate = 0.1, .min_delay = 0ms, .max_delay = 40ms, .seed = seed});
    sim.add_worker("w1", 2);
    sim.add_worker("w2", 3);
    sim.add_worker("w3", 1);
    sim.submit(200);
    sim.run_until_done(500);
    sim.check_exactly_once(200);
    CHECK(sim.net.dropped() > 0);
    CHECK(sim.net.duplicated() > 0);
  }
}

TEST_CASE("a worker that dies mid-job loses nothing: its jobs complete on another worker") {
  simulation sim({.min_delay = 1ms, .max_delay = 2ms});
  sim.add_worker("w1", 4);
  for (int i = 0; i < 5; ++i) sim.step();
  sim.submit(4);
  for (int i = 0; i < 10 && sim.workers["w1"].running.size() < 4; ++i) sim.step();
  REQUIRE(sim.workers["w1"].running.size() == 4);  // taken, not finished
  sim.workers["w1"].alive = false;  // kill -9
  sim.net.cut("w1");
  sim.add_worker("w2", 4);
  sim.run_until_done(0);
  sim.check_exactly_once(4);
  CHECK(sim.hub->counters().requeued == 4);
  CHECK(sim.hub->counters().peers_lost == 1);
}

TEST_CASE("a hub restarted on its ledger completes every acknowledged job, none twice") {
  simulation sim({.drop = 0.05, .duplicate = 0.05, .min_delay = 0ms, .max_delay = 20ms, .seed = 11});
  sim.add_worker("w1", 2);
  sim.add_worker("w2", 2);
  sim.submit(100);
  for (int i = 0; i < 40; ++i) sim.step();
  REQUIRE(sim.client.outstanding() > 0);
  REQUIRE(sim.client.outstanding() < 100);
  sim.start_hub();  // kill -9 and restart: in-memory state gone, ledger kept
  sim.run_until_done(300);
  sim.check_exactly_once(100);
}

TEST_CASE("a restarted worker under the same name gets its lost jobs again") {
  simulation sim({.min_delay = 1ms, .max_delay = 1ms});
  sim.add_worker("w1", 2);
  for (int i = 0; i < 5; ++i) sim.step();
  sim.submit(2);
  for (int i = 0; i < 10 && sim.workers["w1"].running.size() < 2; ++i) sim.step();
  REQUIRE(sim.workers["w1"].running.size() == 2);
  sim.add_worker("w1", 2);  // a new process with the same name, holding nothing
  sim.run_until_done(0);
  sim.check_exactly_once(2);
}
