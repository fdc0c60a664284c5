// The peers whose absence would change what the referee decides, kept
// beyond their presence on the bus (docs/operations.md "A required detector
// or an exemplar store that drops off the bus"): required detectors (a
// candidate judged without one would skip its verdict) and exemplar stores
// (a clean success settled without one would never be inserted). Neither a
// peer's stall or restart nor the referee's own restart changes an outcome:
// - one that leaves is still counted on within the grace ([referee]
//   peer_grace_ms) of its leaving; the hub queues its jobs until it is back;
// - the list is in the ledger (family "candidates", "p/<name>"), and a
//   restarted referee counts every listed peer as having left at its start,
//   so it counts on them before the hub's registry reaches it (up to ten
//   heartbeats).
// What it allows: advisory detectors, evaluators and other peers are never
// kept; a peer away longer than the grace is forgotten and erased, so a
// retired one stops being counted on. Used by referee_core only, on its
// thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "runtime/base/result.hpp"
#include "storage/kv_store.hpp"

namespace crucible::referee {

class remembered_peers {
 public:
  struct peer {
    bool detector = false;           // a required detector (else an exemplar store)
    std::vector<std::string> kinds;  // job kinds it serves
    std::uint32_t deadline_ms = 0;   // a detector's deadline (0: the referee's default)
    std::int64_t away_until_ns = 0;  // 0: on the bus; else counted on while away until then
  };

  remembered_peers(std::shared_ptr<storage::kv_store> kv, std::chrono::milliseconds grace)
      : kv_(std::move(kv)), grace_(grace) {}

  // Every listed peer, as if it had left at now. Once, first.
  status recover(std::int64_t now_ns);
  // A peer registered: listed when it is a required detector or serves
  // exemplar.insert (written when new or changed), unlisted otherwise.
  status joined(const std::string& name, bool required_detector, const std::vector<std::string>& kinds,
                std::uint32_t deadline_ms);
  // A peer left the bus at now: the listed one it was, while it is counted
  // on away (nullptr: not listed, or a grace of 0 forgot it at once).
  result<const peer*> left(const std::string& name, std::int64_t now_ns);
  // Forgets those away past their grace; returns their names.
  result<std::vector<std::string>> expire(std::int64_t now_ns);
  // Those away within their grace, to be counted on as if registered.
  std::vector<std::pair<std::string, const peer*>> away(std::int64_t now_ns) const;
  std::size_t away_count() const;  // for the referee's log line

 private:
  status forget(const std::string& name);

  std::shared_ptr<storage::kv_store> kv_;
  std::chrono::milliseconds grace_;
  std::map<std::string, peer> listed_;
};

}  // namespace crucible::referee
