// Feeds: one envelope's bytes (messages/envelope.fbs) as a role receives it
// in a job payload, a job result or an event. First messages::open(), the
// verifier every receiver runs, and describe() (every log line of a refused
// message); then, by payload kind, the decoder the receiving role calls:
//   DetectRequest   detector role      detector::input_from
//   RolloutGroup    learner role       learner::group_from
//   ExemplarQuery   exemplar role      exemplar::query_from
//   Settlement      exemplar role      exemplar::settlement_from
//   Candidate       referee            referee::copy_candidate (into its jobs)
//   Measurement     referee            referee::copy_measurement
// and, on the raw bytes as the rollout gets them from a job result,
// rollout::exemplars_from and rollout::settlement_from; as an event, the
// dashboard's node::show_event (Settlement, ExemplarBuckets, PeerEvent),
// then every /api view of the board as the server sends it (json_text).
// Checks: no crash or sanitizer report; what the referee copies out of a
// verified message verifies again; a decoded group has samples whose
// log-probs match their completions.
#include <cstdlib>

#include "actors/detector/detector_wire.hpp"
#include "actors/exemplar/exemplar_wire.hpp"
#include "actors/learner/learner_wire.hpp"
#include "actors/referee/referee_wire.hpp"
#include "actors/rollout/rollout_wire.hpp"
#include "messages/codec.hpp"
#include "runtime/node/hub_board.hpp"

namespace {

using namespace crucible;
namespace m = crucible::msg;

template <class T>
void copy_verifies(const T& table, flatbuffers::Offset<T> (*copy)(flatbuffers::FlatBufferBuilder&, const T&)) {
  messages::envelope_writer w;
  auto b = w.finish(copy(w.fbb(), table), "fuzz");
  if (!messages::open(b)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const messages::bytes raw(data, data + size);
  (void)rollout::exemplars_from(raw);
  (void)rollout::settlement_from(raw, "c1");

  // A fresh board each input: what one event does to it, then every view
  // must render as JSON that parses again.
  const auto now = dashboard::clock::now();
  dashboard::board board({}, now);
  for (const char* topic : {"Settlement", "ExemplarBuckets", "PeerEvent"})
    node::show_event({bus::channel::event, "", topic, raw}, board, 1 << 20, now);
  for (const auto& view : {board.fleet(), board.queues(), board.settlements(50), board.throughput(), board.rewards(),
                           board.exemplars(), board.kernels()})
    if (nlohmann::json::parse(dashboard::json_text(view), nullptr, false).is_discarded()) std::abort();

  auto env = messages::open(raw);
  if (!env) return 0;
  const m::Envelope& e = **env;
  (void)messages::describe(e);
  switch (e.payload_type()) {
    case m::Payload::DetectRequest: {
      auto in = detector::input_from(*e.payload_as_DetectRequest());
      if (in.measured_ok && !in.measured) std::abort();
      break;
    }
    case m::Payload::RolloutGroup:
      if (auto g = learner::group_from(*e.payload_as_RolloutGroup())) {
        if (g->samples.empty()) std::abort();
        for (const auto& s : g->samples)
          if (s.prompt_ids.empty() || s.behaviour_logprobs.size() != s.completion_ids.size()) std::abort();
        (void)g->oldest_version();
      }
      break;
    case m::Payload::ExemplarQuery: (void)exemplar::query_from(*e.payload_as_ExemplarQuery()); break;
    case m::Payload::Settlement: {
      auto s = exemplar::settlement_from(*e.payload_as_Settlement());
      if (static_cast<int>(s.status) < 0 || static_cast<int>(s.status) > 4) std::abort();
      break;
    }
    case m::Payload::Candidate: copy_verifies(*e.payload_as_Candidate(), &referee::copy_candidate); break;
    case m::Payload::Measurement: copy_verifies(*e.payload_as_Measurement(), &referee::copy_measurement); break;
    default: break;
  }
  return 0;
}
