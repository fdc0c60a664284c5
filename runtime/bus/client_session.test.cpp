// client_session with manual acks (the referee's hub client): a result is
// acknowledged only once its owner says it is durable, so a client that dies
// between delivery and its own write gets the result again after a restart.
// Hub, worker and client over the in-memory bus; virtual time, no sleeps.
#include <doctest/doctest.h>

#include <memory>

#include "runtime/bus/client_session.hpp"
#include "runtime/bus/memory_transport.hpp"
#include "runtime/bus/worker_session.hpp"
#include "runtime/hub/hub_core.hpp"
#include "storage/memory_store.hpp"

using namespace crucible;
using namespace crucible::bus;
using namespace std::chrono_literals;

namespace {

peer_options quick(const std::string& name, std::vector<std::string> kinds = {}) {
  peer_options o;
  o.name = name;
  o.slots = kinds.empty() ? 0 : 1;
  o.job_kinds = std::move(kinds);
  o.heartbeat = 100ms;
  o.dead_after = 600ms;
  o.retry = 300ms;
  o.accepted_retry = 600ms;
  return o;
}

void send_all(transport& t, outbox out) {
  for (auto& o : out) (void)(o.via == channel::direct ? t.send(o.to, o.data) : t.publish(o.to, o.data));
}

struct rig {
  memory_network net;
  storage::memory_store kv;
  storage::memory_segments log;
  hub::job_ledger ledger{kv, log};
  hub::hub_core hub{[] {
                      hub::hub_options o;
                      o.heartbeat = 100ms;
                      o.dead_after = 600ms;
                      return o;
                    }(),
                    ledger, 1};
  std::unique_ptr<transport> hub_end = net.hub_end();
  worker_session worker{quick("w", {"echo"})};
  std::unique_ptr<transport> worker_end = net.peer_end("w");
  std::unique_ptr<client_session> client;
  std::unique_ptr<transport> client_end = net.peer_end("c");
  std::vector<client_session::job_result> results;

  rig() {
    REQUIRE(hub.recover(net.now()).ok());
    worker.start(net.now());
    start_client();
  }
  void start_client() {
    client = std::make_unique<client_session>(quick("c"), true);
    client->start(net.now());
  }
  void step() {
    net.advance(10ms);
    auto now = net.now();
    std::vector<frame> frames;
    (void)hub_end->receive(frames, 1000, 0ms);
    for (auto& f : frames) hub.on_frame(f, now);
    hub.on_tick(now);
    REQUIRE(hub.finish_batch(now).ok());
    send_all(*hub_end, hub.take_outbox());
    frames.clear();
    (void)worker_end->receive(frames, 1000, 0ms);
    for (auto& f : frames) worker.on_frame(f, now);
    for (auto& j : worker.take_jobs()) worker.complete(j.id, msg::JobStatus::Ok, j.payload, "", now);
    worker.on_tick(now);
    send_all(*worker_end, worker.take_outbox());
    frames.clear();
    (void)client_end->receive(frames, 1000, 0ms);
    for (auto& f : frames) client->on_frame(f, now);
    client->on_tick(now);
    for (auto& r : client->take_results()) results.push_back(std::move(r));
    send_all(*client_end, client->take_outbox());
  }
  void steps(int n) {
    for (int i = 0; i < n; ++i) step();
  }
};

}  // namespace

TEST_CASE("with manual acks the hub keeps a delivered result until the client acknowledges it") {
  rig r;
  r.steps(5);
  r.client->submit("job-1", "echo", bytes{7}, r.net.now());
  r.steps(20);
  REQUIRE(r.results.size() == 1);
  CHECK(r.hub.unfinished_jobs() == 1);  // delivered, not acknowledged: the hub still holds it

  // The client dies before recording the result; its next incarnation gets
  // it again when it registers, and asking again changes nothing.
  r.results.clear();
  r.start_client();
  r.steps(5);
  REQUIRE(r.results.size() == 1);
  CHECK(r.results[0].id == "job-1");
  CHECK(r.results[0].payload == bytes{7});
  r.client->submit("job-1", "echo", bytes{7}, r.net.now());
  r.steps(20);
  CHECK(r.results.size() == 1);
  CHECK(r.hub.unfinished_jobs() == 1);

  r.client->acknowledge("job-1");
  r.steps(5);
  CHECK(r.hub.unfinished_jobs() == 0);
  r.steps(100);  // resends and heartbeats bring nothing more
  CHECK(r.results.size() == 1);
}
