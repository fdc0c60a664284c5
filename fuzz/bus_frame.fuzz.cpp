// Feeds: one ZeroMQ multipart message, sent by a raw socket over ipc:// to
// the real transports (runtime/bus/zmq_transport.cpp), as a peer or a hub
// would send it. The input's first byte picks the path, the rest is the
// parts (fuzz_support.hpp, split_parts):
//   0  DEALER -> the hub's ROUTER    a peer's direct message (batch.hpp splits it)
//   1  PUB    -> the hub's XSUB      a peer's event, [topic][data]
//   2  ROUTER -> a peer's DEALER     the hub's direct message to a worker or client
//   3  XPUB   -> a peer's SUB        an event the hub fans out
// Each frame receive() returns goes where the processes hand it: a fresh
// hub_core on a memory ledger (0, 1), or a started worker_session and a
// client_session with a job outstanding (2, 3); then ticks and the ledger
// commit, as the hub and worker actors run them.
// Checks: no crash, leak or sanitizer report on that path, and the
// transport's promise that every message comes out as at least one frame (a
// malformed one as an empty frame, for the verifier to refuse and count):
// it aborts when none arrives within 10 s.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <memory>

#include <spdlog/spdlog.h>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "fuzz/fuzz_support.hpp"
#include "runtime/bus/client_session.hpp"
#include "runtime/bus/worker_session.hpp"
#include "runtime/bus/zmq_transport.hpp"
#include "runtime/hub/hub_core.hpp"
#include "storage/memory_store.hpp"

namespace {

using namespace crucible;
using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

constexpr const char* kPeerName = "fuzz-peer";      // the raw DEALER's routing id at the hub
constexpr const char* kWorkerName = "fuzz-worker";  // the peer transport's name

// The sockets, made once (a hub transport per input would cost a bind each).
// The raw ones are never closed (their context is never terminated).
struct rig {
  std::string dir;
  zmq::context_t ctx{1};
  std::unique_ptr<bus::transport> hub, peer;
  zmq::socket_t dealer{ctx, zmq::socket_type::dealer};
  zmq::socket_t pub{ctx, zmq::socket_type::pub};
  zmq::socket_t router{ctx, zmq::socket_type::router};
  zmq::socket_t xpub{ctx, zmq::socket_type::xpub};
};
rig* the_rig = nullptr;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "bus_frame fuzzer: %s\n", what.c_str());
  std::abort();
}

// Frames from t until at least one arrived, or nothing after `wait`.
std::vector<bus::frame> frames_from(bus::transport& t, std::chrono::milliseconds wait) {
  std::vector<bus::frame> out;
  auto until = clock_type::now() + wait;
  while (out.empty() && clock_type::now() < until) {
    if (auto s = t.receive(out, 1024, 20ms); !s) fail(s.error().text());
  }
  return out;
}

// One part, sent again when a signal interrupted it (EINTR: the part was not
// queued). libFuzzer's -timeout alarm (SIGALRM, every few seconds) once
// interrupted a blocking send after 3.57 million inputs and the uncaught
// zmq::error_t ended the run (fuzz/regressions/bus_frame/eintr-send).
void send_part(zmq::socket_t& s, zmq::const_buffer part, zmq::send_flags flags) {
  for (;;) {
    try {
      s.send(part, flags);
      return;
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
  }
}

void send_parts(zmq::socket_t& s, const std::vector<std::span<const std::uint8_t>>& parts, const char* route = nullptr) {
  if (route) send_part(s, zmq::buffer(std::string_view(route)), zmq::send_flags::sndmore);
  for (std::size_t i = 0; i < parts.size(); ++i)
    send_part(s, zmq::buffer(parts[i].data(), parts[i].size()),
              i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
}

// Until the peer's subscription reached the publisher and one event came through.
void warm_up_events(zmq::socket_t& publisher, bus::transport& receiver) {
  const std::uint8_t t[] = {'w'};
  for (int i = 0; i < 500; ++i) {
    send_parts(publisher, {std::span(t), std::span(t)});
    if (!frames_from(receiver, 20ms).empty()) return;
  }
  fail("events never arrived during warm-up");
}

void set_up() {
  spdlog::set_level(spdlog::level::off);  // every malformed frame logs a warning
  auto* r = new rig;
  r->dir = "/tmp/crucible-fuzz-bus-" + std::to_string(::getpid());
  std::filesystem::create_directories(r->dir);
  const std::string hub_at = "ipc://" + r->dir + "/hub", peer_hub_at = "ipc://" + r->dir + "/peer-hub";

  auto hub = bus::bind_hub_transport(hub_at);
  if (!hub) fail(hub.error().text());
  r->hub = std::move(*hub);
  r->dealer.set(zmq::sockopt::routing_id, std::string(kPeerName));
  r->dealer.connect(hub_at);
  r->pub.connect(hub_at + ".events-in");

  r->router.bind(peer_hub_at);
  r->xpub.bind(peer_hub_at + ".events-out");
  auto peer = bus::connect_peer_transport(peer_hub_at, kWorkerName);
  if (!peer) fail(peer.error().text());
  r->peer = std::move(*peer);
  if (auto s = r->peer->subscribe(""); !s) fail(s.error().text());
  the_rig = r;
  // Registered after the transports made ZeroMQ's process context, so it runs
  // before that context's destructor, which would wait for their sockets forever.
  std::atexit([] {
    the_rig->hub.reset();
    the_rig->peer.reset();
    std::error_code ec;
    std::filesystem::remove_all(the_rig->dir, ec);
  });

  const std::uint8_t hello[] = {'h'};
  send_parts(r->dealer, {std::span(hello)});
  if (frames_from(*r->hub, 10s).empty()) fail("the hub never heard the raw dealer");
  warm_up_events(r->pub, *r->hub);
  // The raw router can route to the peer once the peer has said something.
  if (auto s = r->peer->send("", hello); !s) fail(s.error().text());
  std::vector<zmq::message_t> in;
  r->router.set(zmq::sockopt::rcvtimeo, 10000);
  if (!zmq::recv_multipart(r->router, std::back_inserter(in))) fail("the raw router never heard the peer");
  send_parts(r->router, {std::span(hello)}, kWorkerName);
  if (frames_from(*r->peer, 10s).empty()) fail("the peer never heard the raw router");
  warm_up_events(r->xpub, *r->peer);
}

void to_hub(std::vector<bus::frame>& frames) {
  storage::memory_store kv;
  storage::memory_segments log;
  hub::job_ledger ledger(kv, log);
  hub::hub_core core(hub::hub_options{}, ledger, 1);
  auto now = clock_type::time_point{} + 1h;
  if (auto s = core.recover(now); !s) fail(s.error().text());
  for (auto& f : frames) core.on_frame(std::move(f), now);
  for (auto later : {1s, 10s}) {
    core.on_tick(now + later);
    (void)core.finish_batch(now + later);
    (void)core.take_outbox();
  }
  (void)core.describe(now + 10s);
}

void to_peer(const std::vector<bus::frame>& frames) {
  auto now = clock_type::time_point{} + 1h;
  bus::peer_options o;
  o.name = kWorkerName;
  o.node = "fuzz";
  o.job_kinds = {"*"};
  o.slots = 2;
  bus::worker_session worker(o);
  worker.start(now);
  bus::client_session client(o);
  client.start(now);
  const std::uint8_t payload[] = {1, 2, 3};
  client.submit("j1", "echo", payload, now);
  for (const auto& f : frames) {
    worker.on_frame(f, now);
    client.on_frame(f, now);
  }
  for (auto& job : worker.take_jobs()) worker.complete(job.id, msg::JobStatus::Ok, job.payload, {}, now);
  worker.on_tick(now + 1s);
  client.on_tick(now + 1s);
  (void)worker.take_outbox();
  (void)client.take_outbox();
  (void)client.take_results();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (!the_rig) set_up();
  if (size == 0) return 0;
  rig& r = *the_rig;
  auto parts = fuzz::split_parts({data + 1, size - 1});
  if (parts.empty()) parts.emplace_back();  // a ZeroMQ message has at least one part
  switch (data[0] % 4) {
    case 0: send_parts(r.dealer, parts); break;
    case 1: send_parts(r.pub, parts); break;
    case 2: send_parts(r.router, parts, kWorkerName); break;
    default: send_parts(r.xpub, parts); break;
  }
  bool at_hub = data[0] % 4 < 2;
  auto frames = frames_from(at_hub ? *r.hub : *r.peer, 10s);
  if (frames.empty()) fail("a message sent to the " + std::string(at_hub ? "hub" : "peer") + " never came out of receive()");
  if (at_hub) to_hub(frames);
  else to_peer(frames);
  return 0;
}
