// The hub's protocol: service registry, credit-based job dispatch, liveness,
// re-queueing, event fan-out and the durable job ledger, as a state machine
// with no I/O and no clock of its own. The hub actor feeds it frames and
// ticks; tests feed it messages one at a time on the in-memory transport.
//
// The protocol (docs/bus.md): a worker registers with the kinds of job it
// serves and tells the hub, in every Credit, Heartbeat and JobResult, how
// many slots it has free and the highest dispatch sequence it has seen; the
// hub sends a job only to a worker with credit. A client's JobSubmit is
// written to the ledger before JobAccepted is sent. Every message is handled
// idempotently by id, so at-least-once delivery gives exactly-once results.
//
// Order of use, per batch: on_frame()... and on_tick(), then finish_batch()
// (dispatch, then the ledger), then take_outbox() and send. Replies are sent
// only after the writes they acknowledge are durable.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "messages/codec.hpp"
#include "runtime/bus/outbox.hpp"
#include "runtime/hub/hub_options.hpp"
#include "runtime/hub/job_ledger.hpp"

namespace crucible::hub {

using clock = std::chrono::steady_clock;

// Counters of one job kind (hub_counters::by_kind).
struct kind_counters {
  std::uint64_t submitted = 0, dispatched = 0, completed = 0, requeued = 0;
};

// Jobs of one kind the hub holds now (hub_core::jobs_by_kind).
struct kind_jobs {
  std::size_t queued = 0;     // waiting for a worker (recovered jobs waiting for theirs too)
  std::size_t in_flight = 0;  // dispatched, no result yet
  std::size_t done = 0;       // result in, not yet acknowledged by the submitter
};

// One registered peer as the hub sees it now (hub_core::fleet).
struct peer_view {
  std::string name, node, role;        // role: messages' Role name ("Evaluator", ...)
  std::vector<std::string> kinds;      // job kinds it serves (none: a client only)
  std::uint32_t free_slots = 0;        // as it last reported
  // busy: holds jobs; idle: serves kinds and holds none; client: serves no
  // kind; silent: nothing heard for more than three heartbeats.
  std::string state;
  std::vector<std::pair<std::string, std::string>> jobs;  // (kind, id) of the jobs it holds
  double silent_s = 0;                 // seconds since the hub last heard from it
};

// Counters for logs, metrics and tests.
struct hub_counters {
  std::uint64_t received = 0;
  std::uint64_t malformed = 0;      // failed verification: dropped
  std::uint64_t rejected = 0;       // valid but refused (unknown peer, wrong kind, overload)
  std::uint64_t submitted = 0;      // new jobs accepted
  std::uint64_t duplicates = 0;     // re-delivered submits and results
  std::uint64_t dispatched = 0;
  std::uint64_t completed = 0;      // first result of a job
  std::uint64_t requeued = 0;       // jobs of dead workers or lost dispatches
  std::uint64_t peers_lost = 0;
  std::uint64_t events_forwarded = 0;
  std::map<std::string, kind_counters> by_kind;  // job kind -> its share of the job counters above
};

class hub_core {
 public:
  hub_core(hub_options options, job_ledger& ledger, std::uint64_t session);

  // Loads unfinished jobs from the ledger (once, before the first frame).
  // They wait recovery_grace for their workers to claim them.
  status recover(clock::time_point now);

  // Handles one received frame. Malformed frames are counted and dropped.
  // Takes the frame so that a job keeps its bytes without a copy.
  void on_frame(bus::frame f, clock::time_point now);

  // Heartbeats, liveness, lost dispatches, the end of recovery.
  void on_tick(clock::time_point now);

  // Dispatches queued jobs to workers with credit, then makes the ledger
  // writes of the batch durable. On failure (a full disk) the outbox keeps
  // only what acknowledges no write (JobAccepted and JobResultAck go: the
  // peers send again, and the ledger retries the writes at the next batch);
  // the caller sends it and reports the error. While the ledger fails, new
  // jobs are refused (Reject Overloaded, with the ledger's error).
  status finish_batch(clock::time_point now);

  bus::outbox take_outbox() { return std::exchange(out_, {}); }

  const hub_counters& counters() const { return counters_; }
  std::size_t queued_jobs() const;
  std::size_t live_workers() const;
  std::size_t unfinished_jobs() const { return jobs_.size(); }
  // Walks every job the hub holds: for metrics, not for every batch.
  std::map<std::string, kind_jobs> jobs_by_kind() const;
  // Registered peers by role ("Evaluator", ...: messages' Role names).
  std::map<std::string, std::size_t> peers_by_role() const;
  // Every registered peer, by name: for the dashboard, not for every batch.
  std::vector<peer_view> fleet(clock::time_point now) const;
  // Whether the batch has ledger writes for finish_batch() to commit.
  bool ledger_writes_staged() const { return ledger_.has_staged(); }
  // One line for the log every 10 s: peers, jobs, counters, and the job
  // unfinished longest (what it is, where it stands, for how long), which
  // names at once what a stalled run waits for.
  std::string describe(clock::time_point now) const;

 private:
  enum class job_state { recovering, queued, assigned, done };
  struct job {
    std::string id, kind, submitter, exclude;
    bus::bytes submit;   // the JobSubmit envelope (verified)
    bus::bytes result;   // the JobResult envelope once done
    // Where a done job's result lives until the submitter acknowledges it:
    // at the worker that sent it, which the hub has not acknowledged yet
    // (result_from), or in the ledger (result_in_ledger).
    std::string result_from;
    bool result_in_ledger = false;
    bool recorded = true;  // its submit is durable (false until the commit after its acceptance succeeds)
    job_state state = job_state::queued;
    std::string worker;
    std::uint64_t seq = 0;
    std::uint32_t attempt = 0;
    clock::time_point dispatched_at{};
    clock::time_point since{};  // accepted, or recovered from the ledger
  };
  struct peer {
    std::string name, node;
    msg::Role role = msg::Role::Unknown;
    std::vector<std::string> kinds;   // job kinds served ("*": any)
    std::uint32_t free_slots = 0;     // as last reported
    std::uint64_t last_seq = 0;       // as last reported
    std::uint64_t next_seq = 1;
    bool required = false;            // detectors
    std::uint32_t deadline_ms = 0;    // detectors
    std::map<std::string, std::uint64_t> assigned;  // job id -> dispatch seq (0: claimed)
    clock::time_point last_seen{};
    bool serves(const std::string& kind) const;
  };

  void handle_register(const std::string& from, const msg::Envelope& env, const msg::Register& r, clock::time_point now);
  void handle_status(peer& p, std::uint32_t free_slots, std::uint64_t last_seq,
                     const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* held, clock::time_point now);
  void handle_submit(peer& p, bus::bytes& raw, const msg::JobSubmit& s, clock::time_point now);
  void handle_result(peer& p, bus::bytes& raw, const msg::JobResult& r, clock::time_point now);
  void handle_client_ack(const msg::JobResultAck& a);
  void handle_event(const bus::frame& f, clock::time_point now);

  void enqueue_front(job& j);
  void unassign(job& j);
  // An assigned job back to the front of its queue, counted as re-queued.
  void requeue(job& j);
  void requeue_jobs_of(peer& p, const char* why);
  void dispatch(clock::time_point now);
  job* next_job_for(const peer& p);
  void publish_peer(const peer& p, bool joined);
  std::uint32_t credit(const peer& p) const;
  job* find_job(std::string_view id);

  void reply_reject(const std::string& to, msg::RejectCode code, std::string_view ref, std::string_view reason);
  void send_accepted(const std::string& to, std::string_view job_id, bool duplicate);
  void send_consumed(const std::string& to, std::string_view job_id);
  void send_result_ack(const std::string& to, std::string_view job_id);
  void send(const std::string& to, bus::bytes data);
  void report_ledger(const status& s, clock::time_point now);
  void refuse_unrecorded(const peer& p, const std::string& id);

  hub_options options_;
  job_ledger& ledger_;
  std::uint64_t session_;
  hub_counters counters_;
  bus::outbox out_;
  messages::envelope_writer writer_;

  std::unordered_map<std::string, job> jobs_;           // unfinished and done-unacknowledged
  std::map<std::string, std::deque<std::string>> queues_;  // kind -> queued job ids
  std::map<std::string, peer> peers_;                    // by routing id (= name)
  std::set<std::string> recently_acked_;                 // answers late duplicates without the ledger
  std::deque<std::string> acked_order_;                  // bounds recently_acked_
  clock::time_point last_heartbeat_{}, last_registry_{};
  clock::time_point recovery_ends_{};
  clock::time_point ledger_failing_since_{}, ledger_reported_{};  // a failing ledger, for its log lines
  std::vector<std::string> unrecorded_;  // jobs accepted since the last commit that succeeded
  std::int64_t last_purge_ns_ = 0;
  std::uint64_t heartbeat_seq_ = 0;
};

}  // namespace crucible::hub
