// What a run of the loop settled, read back from the referee's candidate
// ledger (each candidate once, however often its jobs were delivered or the
// run was resumed), grouped by rollout group in the order groups started.
// `crucible run` prints the summary and writes summary.json and report.html
// from it; tests read summary.json.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "actors/referee/candidate_ledger.hpp"
#include "runtime/base/result.hpp"
#include "runtime/cli/settlements_file.hpp"

namespace crucible::cli {

struct group_row {
  std::string id, task;
  std::uint64_t policy_version = 0;
  std::int64_t started_ns = 0, settled_ns = 0;  // first submission, last settlement
  std::size_t samples = 0, successes = 0;
  double reward_sum = 0;
  double mean_reward() const { return samples ? reward_sum / static_cast<double>(samples) : 0; }
};

// Mean settled reward and success rate over some groups (per sample).
struct group_span {
  std::size_t groups = 0, samples = 0;
  double mean_reward = 0, success_rate = 0;
};

// Every settled candidate whose id starts with `prefix` ("" = all), in the
// order they were submitted, with its code (from the Candidate). Errors:
// the ledger's (corrupt records).
result<std::vector<settled_row>> read_settlements(referee::candidate_ledger& ledger, const std::string& prefix);

// Rows grouped by Settlement.group_id, in the order groups started.
std::vector<group_row> groups_of(const std::vector<settled_row>& rows);

// Groups [first, first + count) pooled.
group_span span_of(const std::vector<group_row>& groups, std::size_t first, std::size_t count);

}  // namespace crucible::cli
