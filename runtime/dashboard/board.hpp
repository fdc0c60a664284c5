// What the dashboard shows, kept up to date by the roles of its process and
// read by its HTTP threads as JSON (server.hpp serves it, docs/dashboard.md
// describes it): the fleet and the queues (the hub actor copies them from
// its core about once a second, runtime/node/hub_board.hpp), throughput
// sampled at each of those copies, the settlements stream (every Settlement
// event the hub forwards, whichever process the referee runs in) with the
// reward curve it makes, and the exemplar buckets per task (the newest
// ExemplarBuckets event of each task the hub forwards, whichever process the
// exemplar store runs in).
//
// Thread-safe: mu_ guards everything. Figures are bounded: the newest
// `max_settlements` settlements and `max_samples` throughput samples are
// kept; the buckets, of every task published.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace crucible::dashboard {

using clock = std::chrono::steady_clock;

// One peer of the fleet (hub::peer_view's fields, for JSON).
struct peer_row {
  std::string name, role, node, state;  // state: busy, idle, client, silent
  std::vector<std::pair<std::string, std::string>> jobs;  // (kind, id) it holds
  std::uint32_t free_slots = 0;
  double silent_s = 0;
};

// One job kind at the hub: what it holds now and its totals so far.
struct queue_row {
  std::string kind;
  std::size_t queued = 0, in_flight = 0, awaiting_ack = 0;
  std::uint64_t submitted = 0, completed = 0, requeued = 0;
};

// One settled candidate (messages/domain.fbs Settlement, less its code).
struct settlement_row {
  std::string candidate, task, group, verdict, reason;  // verdict: Success, Failure, Void, Hack
  double reward = 0, speedup = 0;
  bool verified = false;
  std::uint64_t policy_version = 0;
  std::int64_t settled_ns = 0;  // wall clock
};

// One non-empty bucket of a task (messages/domain.fbs ExemplarBucket).
struct bucket_row {
  std::int32_t bucket = 0;
  double low = 0, high = 0, mean = 0;
  std::uint64_t count = 0;
  double probability = 0;  // of a query's first draw
};
// A task's buckets as an exemplar store last published them
// (messages/domain.fbs ExemplarBuckets).
struct task_buckets {
  std::string task, store;  // store: the publishing peer
  std::string selector, scale;
  double temperature = 0, bucket_width = 0;
  std::vector<bucket_row> buckets;
};

struct board_options {
  std::size_t max_settlements = 2000;  // newest kept for the stream and the reward curve; default 2000
  std::size_t max_samples = 3600;      // throughput samples kept (one a second: an hour); default 3600
  std::size_t reward_window = 20;      // settlements in the reward curve's running mean; default 20
  double rate_window_s = 10;           // throughput is the rate over this many seconds; default 10
};

// The text of an /api answer (server.cpp sends it; the envelope fuzzer
// renders every view through it). A peer's strings are bytes: a task id or
// a peer name that is not UTF-8 has U+FFFD for each bad byte, where
// nlohmann's dump would throw and leave the endpoint answering 500 for as
// long as the row stays on the board.
std::string json_text(const nlohmann::json& j);

class board {
 public:
  explicit board(board_options options = {}, clock::time_point start = clock::now());

  // The hub's fleet and queues now; adds a throughput sample at `now`.
  void update_hub(std::vector<peer_row> fleet, std::vector<queue_row> queues, clock::time_point now);
  void add_settlement(settlement_row s);
  // A task's buckets, published at `now`: they replace the task's earlier ones.
  void update_buckets(task_buckets t, clock::time_point now);
  // A peer joined or left, as the hub's PeerEvents say: the fleet of a
  // dashboard outside the hub's process (no hub copy; state "registered").
  void update_peer(std::string name, std::string role, std::string node, bool joined);

  // The JSON of each /api endpoint (docs/dashboard.md lists their fields).
  nlohmann::json fleet() const;
  nlohmann::json queues() const;
  nlohmann::json settlements(std::size_t newest) const;
  nlohmann::json throughput() const;
  nlohmann::json rewards() const;
  nlohmann::json exemplars() const;
  // The kernels found: each task's best Success (highest reward; the
  // earlier of equals), kept for the whole run whatever max_settlements
  // drops from the stream; the table report.html and `crucible kernels
  // export` give at the end, live.
  nlohmann::json kernels() const;

 private:
  struct sample {
    double t = 0;                                   // seconds since start
    std::map<std::string, std::uint64_t> completed; // jobs completed so far, by kind
    std::uint64_t settled = 0;                      // settlements seen so far
  };

  board_options options_;
  clock::time_point start_;
  mutable std::mutex mu_;
  bool hub_seen_ = false;                 // GUARDED_BY(mu_)
  std::vector<peer_row> fleet_;           // GUARDED_BY(mu_)
  std::map<std::string, peer_row> announced_;  // GUARDED_BY(mu_): by name, from PeerEvents
  std::vector<queue_row> queues_;         // GUARDED_BY(mu_)
  std::deque<sample> samples_;            // GUARDED_BY(mu_)
  std::deque<settlement_row> settled_;    // GUARDED_BY(mu_)
  std::uint64_t settled_total_ = 0;       // GUARDED_BY(mu_)
  std::map<std::string, std::uint64_t> verdicts_;  // GUARDED_BY(mu_)
  std::set<std::string> tasks_;           // GUARDED_BY(mu_): every task settled
  std::map<std::string, settlement_row> best_;  // GUARDED_BY(mu_): by task, its best Success
  struct published_buckets {
    task_buckets buckets;
    double at = 0;  // seconds since start
  };
  std::map<std::string, published_buckets> buckets_;  // GUARDED_BY(mu_): by task
};

}  // namespace crucible::dashboard
