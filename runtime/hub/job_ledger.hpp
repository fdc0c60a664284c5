// The hub's durable record of jobs (storage family `jobs`). A job the hub
// acknowledges is in the ledger first, so a kill -9 of the hub loses nothing:
// on restart, load() returns every job that had not been completed and
// acknowledged by its submitter.
//
// Keys (\0 is a NUL byte): "p\0<id>" the job's JobSubmit envelope (pending),
// "r\0<id>" its JobResult envelope (done, and the submitter was slow to
// acknowledge it: docs/bus.md),
// "a\0<id>" the time it was acknowledged (kept for de-duplication, purged
// after a retention period). Used only by hub_core, on the hub actor's thread.
// Writes are staged and made durable together by commit() (group commit).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"
#include "storage/kv_store.hpp"

namespace crucible::hub {

class job_ledger {
 public:
  job_ledger(storage::kv_store& kv, storage::durability durability) : kv_(kv), durability_(durability) {}

  void stage_submit(std::string_view job_id, std::span<const std::uint8_t> submit_envelope);
  void stage_result(std::string_view job_id, std::span<const std::uint8_t> result_envelope);
  void stage_acked(std::string_view job_id, std::int64_t now_ns);

  // Makes every staged write durable in one atomic batch.
  status commit();
  bool has_staged() const { return !batch_.empty(); }

  // Whether the submitter already acknowledged this job's result.
  result<bool> was_acked(std::string_view job_id);

  // A job not yet acknowledged by its submitter: its JobSubmit envelope and,
  // once done, its JobResult envelope (empty while pending).
  struct entry {
    std::vector<std::uint8_t> submit;
    std::vector<std::uint8_t> result;
  };
  result<std::vector<entry>> load();

  // Forgets acknowledgement markers older than cutoff_ns. Returns how many.
  result<std::size_t> purge_acked(std::int64_t cutoff_ns);

 private:
  storage::kv_store& kv_;
  storage::durability durability_;
  storage::write_batch batch_;
};

}  // namespace crucible::hub
