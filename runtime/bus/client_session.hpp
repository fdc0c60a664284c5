// A client's side of the bus protocol (docs/bus.md), as a state machine with
// no I/O: submits jobs, resends each until its result arrives (the hub
// answers a duplicate from its ledger), delivers each result exactly once and
// acknowledges it. Used by `crucible submit`, the benchmarks, the referee and
// tests.
#pragma once

#include <chrono>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/bus/outbox.hpp"
#include "runtime/bus/peer_options.hpp"

namespace crucible::bus {

class client_session {
 public:
  using clock = std::chrono::steady_clock;
  struct job_result {
    std::string id;
    msg::JobStatus status = msg::JobStatus::Ok;
    bytes payload;
    std::string error, worker;
  };

  // With manual_acks, a result is acknowledged to the hub only when the
  // owner calls acknowledge(id), after it has made the result durable (the
  // referee does, so that a crash between delivery and its ledger write
  // cannot lose a result the hub has already forgotten). Such a client also
  // gets results it did not submit in this incarnation (the hub resends
  // unacknowledged ones when it registers): the owner records or ignores
  // them, and acknowledges them either way.
  explicit client_session(peer_options options, bool manual_acks = false);

  void start(clock::time_point now);
  // Queues a job; the id must be unique for the life of the run. A job with
  // exclude_worker set is never dispatched to that worker.
  void submit(std::string_view id, std::string_view kind, std::span<const std::uint8_t> payload, clock::time_point now,
              std::string_view exclude_worker = {});
  void on_frame(const frame& f, clock::time_point now);
  void on_tick(clock::time_point now);

  std::vector<job_result> take_results() { return std::exchange(results_, {}); }
  // Manual acks only: the result of id is durable with its owner.
  void acknowledge(const std::string& id);
  outbox take_outbox() { return std::exchange(out_, {}); }

  std::size_t outstanding() const { return outstanding_.size(); }
  bool registered() const { return registered_; }
  std::uint64_t duplicate_results() const { return duplicate_results_; }
  std::uint64_t resends() const { return resends_; }

 private:
  struct pending {
    bytes envelope;
    clock::time_point sent;
    bool accepted = false;
  };
  void send_register(clock::time_point now);
  void resend_all(clock::time_point now);
  void ack(const std::string& id);

  peer_options options_;
  messages::envelope_writer writer_;
  outbox out_;
  std::vector<job_result> results_;
  std::map<std::string, pending> outstanding_;
  std::set<std::string> delivered_;
  bool manual_acks_ = false;
  std::set<std::string> unconfirmed_;  // manual acks: delivered, not yet acknowledged
  std::string last_refusal_;           // the reason of the last Overloaded refusal logged
  bool registered_ = false;
  std::uint64_t hub_session_ = 0;
  clock::time_point last_heard_{}, last_heartbeat_{}, last_register_{}, last_resend_scan_{};
  std::uint64_t heartbeat_seq_ = 0;
  std::uint64_t duplicate_results_ = 0, resends_ = 0;
};

}  // namespace crucible::bus
