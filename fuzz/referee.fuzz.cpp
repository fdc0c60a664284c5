// Feeds: the referee core (actors/referee/referee_core.hpp) on a memory
// ledger, everything it receives from the bus: the input is several
// envelopes (fuzz_support.hpp, split_parts). With two evaluators, a
// required detector and an exemplar store registered and candidate c1
// settling, part 0 is a settle job's payload (a Candidate), part 1 a
// PeerEvent, and the parts after them the results, in order, of the jobs the
// core submits (measure/, verify/, detect/, exemplar.insert), each of which
// it verifies with payload_of<T> and reads; a tick past every deadline ends
// each round.
// Checks: no crash or sanitizer report; no candidate settles twice with
// different settlements; everything the core publishes or replies verifies
// as a Settlement.
#include <cstdlib>
#include <map>

#include <spdlog/spdlog.h>

#include "actors/referee/referee_core.hpp"
#include "actors/referee/referee_wire.hpp"
#include "fuzz/fuzz_support.hpp"
#include "storage/memory_store.hpp"

namespace {

using namespace crucible;
namespace m = crucible::msg;

constexpr std::int64_t second = 1'000'000'000;

referee::bytes peer_event(const std::string& name, m::Role role, const std::vector<std::string>& kinds,
                          bool required) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<flatbuffers::Offset<flatbuffers::String>> k;
  for (const auto& s : kinds) k.push_back(fbb.CreateString(s));
  auto kv = fbb.CreateVector(k);
  auto e = m::CreatePeerEvent(fbb, fbb.CreateString(name), role, fbb.CreateString("node"), true, kv, required, 0);
  return w.finish(e, "hub", name);
}

const std::vector<referee::bytes>& registry() {
  static const std::vector<referee::bytes> events{
      peer_event("ev1", m::Role::Evaluator, {"measure", "verify:cpu"}, false),
      peer_event("ev2", m::Role::Evaluator, {"measure", "verify:cpu"}, false),
      peer_event("static", m::Role::Detector, {"detect:static"}, true),
      peer_event("exemplars", m::Role::Exemplar, {"exemplar.sample", "exemplar.insert"}, false),
  };
  return events;
}

void check_settlements(const referee::referee_outbox& out, std::map<std::string, referee::bytes>& settled) {
  for (const auto& b : out.publish)
    if (!referee::payload_of<m::Settlement>(b)) std::abort();
  for (const auto& [id, b] : out.replies) {
    if (!referee::payload_of<m::Settlement>(b)) std::abort();
    auto [it, first] = settled.emplace(id, b);
    if (!first && it->second != b) std::abort();  // exactly one settlement per candidate
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // Every input settles c1 and logs it: 527 MB of log lines in 5 million
  // inputs, written at the cost of the inputs themselves.
  spdlog::set_level(spdlog::level::off);
  auto parts = fuzz::split_parts({data, size});
  auto part = [&](std::size_t i) { return i < parts.size() ? referee::bytes(parts[i].begin(), parts[i].end()) : referee::bytes(); };

  auto kv = std::make_shared<storage::memory_store>();
  referee::referee_core core(referee::referee_options{}, kv, "referee",
                             [](const referee::candidate_record&, const std::string&, const std::string&) -> status {
                               return {};
                             });
  std::int64_t now = 1000 * second;
  if (!core.recover(now)) std::abort();
  for (const auto& e : registry())
    if (!core.on_peer_event(e, now)) std::abort();
  if (!core.on_settle(referee::candidate_envelope("c1", "t", "class ModelNew: pass", "client"), now)) std::abort();
  (void)core.on_settle(part(0), now);
  (void)core.on_peer_event(part(1), now);

  std::map<std::string, referee::bytes> settled;
  std::size_t next = 2;
  for (int round = 0; round < 6; ++round) {
    auto out = core.take_outbox();
    check_settlements(out, settled);
    for (const auto& job : out.jobs) {
      if (next >= parts.size()) break;
      (void)core.on_result({job.id, true, part(next++), "", "ev1"}, now);
    }
    now += 1000 * second;
    (void)core.on_tick(now);
  }
  check_settlements(core.take_outbox(), settled);
  (void)core.describe();
  return 0;
}
