// The hub's durable record of jobs. A job the hub acknowledges is in the
// ledger first, so a kill -9 of the hub loses nothing: on restart, load()
// returns every job that had not been completed and acknowledged by its
// submitter.
//
// Two stores (docs/bus.md, "The ledger"):
// - the job log, append-only segments of the hub's own (storage/segment_store.hpp),
//   holds the bytes: a record per JobSubmit envelope, per JobResult envelope
//   that had to be kept (the submitter was slow to acknowledge it), and per
//   acknowledgement. Record: u32 CRC32C (hardware, storage/crc32c.hpp) of
//   what follows, u32 body length, body = u8 type ('p' submit, 'r' result,
//   'a' acknowledged), u16 id length, id, envelope. Once a segment is full
//   (segment_bytes of new records, and no fewer than were carried into it)
//   the next one starts; at that point the records of unacknowledged jobs
//   still in older segments are copied forward and those segments removed,
//   so the log holds about two segments plus the jobs that live long.
// - the kv_store (RocksDB, family `jobs`) holds only the small markers
//   "a\0<id>" -> acknowledgement time, which answer late duplicate submits
//   for retain_acked and are purged after it.
//
// Used only by hub_core, on the hub actor's thread. Writes are staged and
// made durable together by commit() (group commit): markers first, then the
// log, so a marker without its log record (a kill -9 in between) still
// keeps the job from being recovered. A commit that fails (a full disk)
// keeps what it staged and writes it first at the next commit, so that
// what the hub holds in memory reaches the disk in order once space
// returns (docs/operations.md, "Full disks").
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/base/result.hpp"
#include "storage/kv_store.hpp"
#include "storage/segment_store.hpp"

namespace crucible::hub {

struct job_ledger_options {
  // Size after which the job log starts a new segment. Default: 64 MiB.
  std::size_t segment_bytes = 64u << 20;
  // Durability of every commit (storage/kv_store.hpp). Default: buffered,
  // which survives a kill -9 of the hub.
  storage::durability durability = storage::durability::buffered;
};

class job_ledger {
 public:
  // Borrows both stores; they must outlive the ledger.
  job_ledger(storage::kv_store& kv, storage::segment_store& log, job_ledger_options options = {})
      : kv_(kv), log_(log), options_(options) {}

  void stage_submit(std::string_view job_id, std::span<const std::uint8_t> submit_envelope);
  void stage_result(std::string_view job_id, std::span<const std::uint8_t> result_envelope);
  void stage_acked(std::string_view job_id, std::int64_t now_ns);

  // Makes every staged write durable in one group. On an error nothing
  // staged may be relied on (the caller withholds its replies); it stays
  // staged and the next commit writes it first.
  status commit();
  bool has_staged() const { return !batch_.empty() || !staged_.empty(); }
  // The error of the last commit while it has not succeeded since (writes
  // wait to be retried), else nullptr. The hub refuses new jobs meanwhile.
  const error* failing() const { return failing_ ? &*failing_ : nullptr; }

  // Whether the submitter already acknowledged this job's result (within
  // retain_acked).
  result<bool> was_acked(std::string_view job_id);

  // A job not yet acknowledged by its submitter: its JobSubmit envelope and,
  // once done, its JobResult envelope (empty while pending). load() reads
  // the whole log (and the records of the RocksDB-only ledger of older
  // versions), rewrites what is live into a fresh segment and removes the
  // rest; call it once per incarnation, before staging anything.
  struct entry {
    std::vector<std::uint8_t> submit;
    std::vector<std::uint8_t> result;
  };
  result<std::vector<entry>> load();

  // Forgets acknowledgement markers older than cutoff_ns. Returns how many.
  result<std::size_t> purge_acked(std::int64_t cutoff_ns);

  // For tests and logs: jobs with records in the log, and segments on disk.
  std::size_t live_jobs() const { return live_.size(); }
  std::size_t segments() const { return segments_.size(); }

 private:
  struct record_at {
    std::uint64_t segment = 0;  // 0: none
    std::uint64_t offset = 0;
    std::uint32_t size = 0;     // the whole record
  };
  struct job_records {
    record_at submit, result;
  };
  struct staged_record {
    char type;
    std::string id;
    record_at at;  // offset: within buf_ until written
  };

  void stage_record(char type, std::string_view id, std::span<const std::uint8_t> data);
  void stage_raw(char type, std::string_view id, std::string_view record);
  void apply(const staged_record& s);
  void release(const record_at& r);
  void drop_staged();
  status write_staged();
  status write_markers_and_log();
  status rotate();

  storage::kv_store& kv_;
  storage::segment_store& log_;
  job_ledger_options options_;

  std::optional<error> failing_;                    // the last commit's error, until one succeeds
  storage::write_batch batch_;                      // markers of this turn
  std::string buf_;                                 // log records of this turn
  std::vector<staged_record> staged_;               // what buf_ holds
  std::uint64_t segment_ = 1;                       // the segment being appended
  std::uint64_t segment_size_ = 0;
  std::uint64_t carried_ = 0;                       // bytes of it copied forward from older segments
  std::set<std::uint64_t> segments_;                // on disk
  std::unordered_map<std::string, job_records> live_;  // unacknowledged jobs' records
  std::map<std::uint64_t, std::size_t> live_in_;    // segment -> live records in it
};

}  // namespace crucible::hub
