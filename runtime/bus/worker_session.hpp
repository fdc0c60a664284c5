// A worker's side of the bus protocol (docs/bus.md), as a state machine with
// no I/O: registers, reports free slots and the jobs it holds, takes jobs
// the hub dispatches (each once, whatever is re-delivered), and resends each
// result until the hub acknowledges it. The worker's actor drives it from
// its transport; tests drive it message by message.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "runtime/bus/outbox.hpp"
#include "runtime/bus/peer_options.hpp"

namespace crucible::bus {

class worker_session {
 public:
  using clock = std::chrono::steady_clock;
  struct job_request {
    std::string id, kind;
    bytes payload;
    std::uint32_t attempt = 0;
  };

  explicit worker_session(peer_options options);

  // Sends Register. Call once before anything else.
  void start(clock::time_point now);
  void on_frame(const frame& f, clock::time_point now);
  void on_tick(clock::time_point now);

  // The owner finished a job it took from take_jobs().
  void complete(std::string_view job_id, msg::JobStatus status, std::span<const std::uint8_t> payload,
                std::string_view error, clock::time_point now);

  // Jobs to run now (never more than the free slots).
  std::vector<job_request> take_jobs() { return std::exchange(ready_, {}); }
  outbox take_outbox() { return std::exchange(out_, {}); }

  bool registered() const { return registered_; }
  std::size_t running() const { return running_.size(); }
  std::size_t unacknowledged() const { return unacked_.size(); }
  std::uint64_t duplicates_ignored() const { return duplicates_; }
  const peer_options& options() const { return options_; }

 private:
  struct pending_result {
    bytes envelope;
    clock::time_point sent;
  };
  void send_register(clock::time_point now);
  void send_credit();
  void send_heartbeat();
  std::vector<std::string> held() const;
  std::uint32_t free_slots() const;
  void start_waiting();

  peer_options options_;
  messages::envelope_writer writer_;
  outbox out_;
  std::vector<job_request> ready_;
  std::deque<job_request> waiting_;                  // dispatched beyond our slots
  std::set<std::string> running_;
  std::map<std::string, pending_result> unacked_;
  std::set<std::string> recently_acked_;
  std::deque<std::string> acked_order_;              // bounds recently_acked_
  std::uint64_t last_seq_ = 0;
  std::uint64_t hub_session_ = 0;
  bool registered_ = false;
  clock::time_point last_heard_{}, last_heartbeat_{}, last_register_{};
  std::uint64_t heartbeat_seq_ = 0;
  std::uint64_t duplicates_ = 0;
};

}  // namespace crucible::bus
