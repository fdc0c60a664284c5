// DIR/settlements.jsonl of a loop run: one line per settled candidate, in
// the order they were submitted. `crucible run` writes it from the referee's
// ledger (run_summary.hpp); `crucible kernels export` reads it back
// (kernels_found.hpp). This file is the one place that knows its fields.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/result.hpp"

namespace crucible::cli {

// One settled candidate. Times are wall clock, nanoseconds since the epoch.
struct settled_row {
  std::string id, group, task, status, reason;
  double reward = 0, speedup = 0;
  bool verified = false;
  std::uint64_t policy_version = 0;  // the policy that generated it
  std::int64_t submitted_ns = 0, settled_ns = 0;
  std::string code;  // the candidate's code; settlements.jsonl keeps it for successes only
  std::string measurement_of;  // the identical candidate whose measurement it took; empty: its own
};

// The row's line: candidate, group, task, status, reward, speedup_raw,
// verified, policy_version, submitted_ns, settled_ns, reason, code when the
// status is Success, and measurement_of when it took an identical
// candidate's measurement ([referee] reuse_identical).
nlohmann::json settlement_line(const settled_row& r);

// Every row of a settlements.jsonl file (blank lines skipped). Errors:
// not_found for a missing file; invalid_argument naming "PATH:LINE" and the
// field for a line that is not JSON, not an object, lacks candidate, task,
// status or reward, or holds a field of the wrong type.
result<std::vector<settled_row>> read_settlements_file(const std::string& path);

}  // namespace crucible::cli
