// What the chaos test checks once its fleet has stopped, read from the
// durable records each role keeps (never from logs): the referee's ledger
// (RocksDB), the exemplar store (RocksDB), the learner's metrics.jsonl and
// checkpoints, and the rollouts' state files.
//
// Who calls it: tests/integration/chaos_processes.test.cpp, after every
// process of the run has exited (RocksDB allows one opener).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace crucible::testing {

// Where the records are and what the run was asked to do.
struct chaos_run {
  std::string referee_ledger;   // crucible referee --ledger
  std::string exemplar_db;      // crucible exemplar --db
  std::string learner_metrics;  // [learner] metrics_file
  std::string checkpoint_dir;   // [learner] checkpoint_dir
  std::map<std::string, std::string> state_files;     // rollout name -> [rollout] state_file
  std::map<std::string, std::uint64_t> groups;        // rollout name -> groups it was to make
  std::uint64_t group_size = 0;                        // [rollout] group_size
  std::vector<std::string> fed;                        // ids of candidates submitted beside the rollouts
  std::map<std::string, std::vector<std::uint8_t>> fed_answers;  // id -> the Settlement its settle job answered
};

struct chaos_findings {
  std::vector<std::string> violations;  // each invariant broken, as a sentence with the ids
  std::vector<std::string> checked;     // each invariant checked, with its counts
};

chaos_findings check_chaos_records(const chaos_run& run);

}  // namespace crucible::testing
