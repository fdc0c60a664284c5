// The referee's durable record of each candidate's life (kv_store family
// "candidates"), so that a restarted referee resumes every unsettled
// candidate where it was and answers a re-delivered settle job with the one
// settlement it made.
//
// Keys: "c/<candidate id>" one candidate_record (CBOR); "best/<task id>" the
// task's best verified speedup (text); "m/<task id>/<code hash>" the
// candidate whose measurement serves that code (measurement_reuse.hpp);
// "p/<name>" a required detector or exemplar store seen (remembered_peers.hpp).
// Used only by referee_core, on the referee actor's thread. Every write
// is durable (write-ahead log) when it returns. Errors: errc::io and
// errc::corrupt from storage, naming the key.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/base/result.hpp"
#include "storage/kv_store.hpp"

namespace crucible::referee {

using bytes = std::vector<std::uint8_t>;

// Where a candidate is in its life; each stage implies the earlier ones.
enum class stage : std::uint8_t { submitted, compiled, measured, verified, judged, settled };
const char* to_string(stage s);

// One detector asked about a candidate.
struct detector_slot {
  std::string name;           // the NAME of its detect:NAME job kind
  bool required = false;
  std::int64_t deadline_ns = 0;  // wall clock
  bool answered = false;
  bytes verdict;              // the Verdict envelope, when answered
};

struct candidate_record {
  std::string id, task;
  stage at = stage::submitted;
  std::int64_t submitted_ns = 0;
  bytes candidate;             // the Candidate envelope (the settle job's payload)
  bytes measurement;           // first Measurement envelope
  bytes verification;          // the verify job's Measurement envelope (layer 7)
  // Layer 7: decided whether needed; needed since when (wall clock);
  // verify job submitted when (0: not yet); done (verified or given up).
  bool verify_decided = false, verify_needed = false, verify_done = false;
  std::int64_t verify_since_ns = 0, verify_submitted_ns = 0;
  bool verified = false;
  std::string verify_note;     // why verification did not happen or failed
  bool detectors_asked = false;
  std::vector<detector_slot> detectors;
  bytes settlement;            // the Settlement envelope once settled
  bool published = false;      // the settlement event was handed to the bus
  bool insert_wanted = false, inserted = false;  // exemplar.insert of a clean success
  // The earlier candidate with the same task and code whose Measurement
  // this one takes or waits for instead of a measure job
  // (measurement_reuse.hpp); empty: measured for itself.
  std::string reused_from;
};

std::string encode(const candidate_record& r);
result<candidate_record> decode(std::string_view data);

class candidate_ledger {
 public:
  explicit candidate_ledger(std::shared_ptr<storage::kv_store> kv) : kv_(std::move(kv)) {}

  status put(const candidate_record& r);
  result<std::optional<candidate_record>> get(const std::string& candidate_id);
  // Every record not finished: unsettled, or settled but not yet published
  // or inserted.
  result<std::vector<candidate_record>> unfinished();
  // Every settled candidate whose id starts with id_prefix, in id order
  // (`crucible run` reads its rollouts' rewards from here: each candidate
  // once, however often its jobs were delivered).
  result<std::vector<candidate_record>> settled(std::string_view id_prefix);

  // The candidate whose measurement serves this task's code (empty when
  // none yet), and its update.
  result<std::string> code_source(const std::string& task_id, std::string_view code);
  status set_code_source(const std::string& task_id, std::string_view code, const std::string& candidate_id);

  // The task's best verified speedup (0 when none) and its update.
  result<double> best_verified(const std::string& task_id);
  status set_best_verified(const std::string& task_id, double speedup);

  storage::kv_store& store() { return *kv_; }

 private:
  result<std::vector<candidate_record>> records(std::string_view id_prefix,
                                                const std::function<bool(const candidate_record&)>& keep);
  std::shared_ptr<storage::kv_store> kv_;
};

}  // namespace crucible::referee
