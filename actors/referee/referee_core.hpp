// The referee's logic (actors/referee/README.md): each candidate's life from
// submitted to settled, verification (layer 7), the detector policy, and
// exactly one settlement per candidate id, as a state machine with no I/O and
// no clock of its own. The referee actor feeds it settle requests, job
// results, PeerEvents and ticks; tests feed them one at a time.
//
// Every change is written to the candidate ledger before anything that
// depends on it leaves the core: a result is acknowledged (acks) only once
// recorded, a settlement is replied or published only once stored.
// Errors from the ledger come back as status, and the candidate's record in
// memory goes back to what its ledger holds (as if the input had not come),
// so memory is never ahead of the disk: the caller logs the error and gives
// the same input again later (the referee actor holds it and retries each
// tick; a full disk: docs/operations.md "Full disks"). A result whose
// recording failed is not acknowledged.
#pragma once

#include <algorithm>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "actors/referee/candidate_ledger.hpp"
#include "actors/referee/referee_options.hpp"
#include "actors/referee/remembered_peers.hpp"
#include "messages/codec.hpp"

namespace crucible::referee {

// Everything the core wants done; the actor drains it after each input.
struct referee_outbox {
  struct job {
    std::string id, kind;
    bytes payload;
    std::string exclude_worker;
  };
  std::vector<job> jobs;                                  // submit through the hub
  std::vector<bytes> publish;                             // Settlement events (topic "Settlement")
  std::vector<std::pair<std::string, bytes>> replies;     // candidate id -> its Settlement (settle job result)
  std::vector<std::string> acks;                          // job results now recorded
};

// A job's result as the core needs it (bus::client_session::job_result).
struct job_outcome {
  std::string id;
  bool ok = false;
  bytes payload;
  std::string error, worker;
};

class referee_core {
 public:
  // sender: the name put on envelopes the referee writes. hacks: where
  // confirmed hacks go (storage::hack_db in the actor; tests pass their own).
  using hack_sink = std::function<status(const candidate_record&, const std::string& reason,
                                         const std::string& detector)>;
  referee_core(referee_options options, std::shared_ptr<storage::kv_store> kv, std::string sender, hack_sink hacks);

  // Loads every unfinished candidate and asks again for what it waits on
  // (same job ids: the hub answers duplicates from its ledger). Once, first.
  status recover(std::int64_t now_ns);

  // Called once per settlement, after it is stored (metrics; none by default).
  using settled_hook = std::function<void(msg::SettlementStatus verdict, bool verified)>;
  void on_settled(settled_hook hook) { settled_hook_ = std::move(hook); }

  // A settle job's payload (a Candidate envelope). A settled candidate is
  // answered at once with its one settlement; a known one changes nothing.
  // Errors: errc::invalid_argument for a payload that is not a Candidate
  // with an id and a task (the settle job fails with it).
  status on_settle(const bytes& candidate, std::int64_t now_ns);
  // The result of a job the core submitted (measure/, verify/, detect/, insert/).
  status on_result(const job_outcome& r, std::int64_t now_ns);
  // A PeerEvent envelope: evaluators and detectors come and go.
  status on_peer_event(const bytes& event, std::int64_t now_ns);
  // Deadlines: second device, verification, detectors.
  status on_tick(std::int64_t now_ns);

  referee_outbox take_outbox() { return std::exchange(out_, {}); }
  std::size_t active() const { return active_.size(); }
  std::uint64_t settled() const { return settled_count_; }
  std::string describe() const;

 private:
  struct peer {
    msg::Role role = msg::Role::Unknown;
    std::vector<std::string> kinds;
    bool required = false;
    std::uint32_t deadline_ms = 0;
    // An exemplar store: it takes the clean successes' inserts.
    bool takes_inserts() const {
      return std::find(kinds.begin(), kinds.end(), "exemplar.insert") != kinds.end();
    }
  };

  // Every detector a candidate judged now is asked: those registered, and
  // the required ones away within their grace (remembered_peers.hpp).
  std::vector<peer> detectors_to_ask(std::int64_t now) const;
  // Whether a clean success settled now goes to an exemplar store: one is
  // registered, or away within its grace.
  bool exemplar_store_known(std::int64_t now) const;

  status advance(candidate_record& r, std::int64_t now);
  status verify_step(candidate_record& r, const msg::Measurement& m, std::int64_t now, bool& waiting);
  status judge_step(candidate_record& r, const msg::Measurement& m, std::int64_t now, bool& waiting);
  // A candidate with reused_from: takes that candidate's measurement, waits
  // while it is measured, or is measured for itself when it cannot serve
  // (measurement_reuse.hpp).
  status take_reused(candidate_record& r);
  void measure(const candidate_record& r);  // its measure job
  status settle(candidate_record& r, msg::SettlementStatus st, double reward, std::string reason, std::int64_t now);
  status after_settled(candidate_record& r);
  void emit_outstanding(const candidate_record& r);
  void submit_detect(const candidate_record& r, const detector_slot& d);
  std::string second_evaluator(const std::string& model, const std::string& except) const;
  status store(candidate_record& r);
  // s, after putting the record of id back to what the ledger holds when s
  // is an error (none: it leaves memory too). Called where r is no longer used.
  status recorded(const std::string& id, status s);
  void sweep();
  std::set<std::string> inserts_sent_;       // exemplar.insert jobs submitted by this incarnation (active ids)
  std::set<std::string> publications_sent_;  // Settlement events published by this incarnation (active ids)

  referee_options options_;
  candidate_ledger ledger_;
  remembered_peers remembered_;  // required detectors and exemplar stores, kept while away and across restarts
  std::string sender_;
  hack_sink hacks_;
  settled_hook settled_hook_;
  referee_outbox out_;
  std::map<std::string, candidate_record> active_;  // unfinished, by candidate id
  std::map<std::string, peer> peers_;               // from PeerEvents, by name
  std::uint64_t settled_count_ = 0;
};

}  // namespace crucible::referee
