// The required detectors the referee has seen, kept beyond their presence on
// the bus (docs/operations.md "A required detector that drops off the bus"),
// so that neither a detector's stall or restart nor the referee's own
// restart waives a required verdict:
// - one that leaves is still asked about the candidates judged within the
//   grace ([referee] required_detector_grace_ms) of its leaving; the hub
//   queues its jobs until it is back;
// - the list is in the ledger (family "candidates", "d/<name>": its
//   deadline and job kinds), and a restarted referee counts every listed
//   one as having left at its start, so it asks them before the hub's
//   registry reaches it (up to ten heartbeats).
// What it allows: a detector registered without `required` is never kept;
// one gone longer than the grace is forgotten and erased, so a retired
// detector stops being asked. Used by referee_core only, on its thread.
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

class required_detectors {
 public:
  struct detector {
    std::vector<std::string> kinds;  // job kinds it serves (detect:NAME)
    std::uint32_t deadline_ms = 0;   // its registration's deadline (0: the referee's default)
    std::int64_t away_until_ns = 0;  // 0: on the bus; else asked while away until then
  };

  required_detectors(std::shared_ptr<storage::kv_store> kv, std::chrono::milliseconds grace)
      : kv_(std::move(kv)), grace_(grace) {}

  // Every listed detector, as if it had left at now. Once, first.
  status recover(std::int64_t now_ns);
  // A detector registered: listed when required (written when new or
  // changed), unlisted when it registers without `required`.
  status joined(const std::string& name, bool required, const std::vector<std::string>& kinds,
                std::uint32_t deadline_ms);
  // A listed detector left the bus at now (a grace of 0 forgets it at once).
  status left(const std::string& name, std::int64_t now_ns);
  // Forgets those away past their grace; returns their names.
  result<std::vector<std::string>> expire(std::int64_t now_ns);
  // Those away within their grace, to be asked as if registered.
  std::vector<std::pair<std::string, const detector*>> away(std::int64_t now_ns) const;
  std::size_t away_count() const;  // for the referee's log line

 private:
  status forget(const std::string& name);

  std::shared_ptr<storage::kv_store> kv_;
  std::chrono::milliseconds grace_;
  std::map<std::string, detector> listed_;
};

}  // namespace crucible::referee
