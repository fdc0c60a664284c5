// An in-memory kv_store for tests: the same contract as rocksdb_store (byte
// order, atomic batches, prefix scans) with no disk, plus fault injection.
//
// Who calls it: tests, and anything that wants a throwaway store. Thread-safe:
// mu_ guards every member. Nothing survives the object.
#pragma once

#include <array>
#include <map>
#include <mutex>
#include <string>

#include "storage/kv_store.hpp"

namespace crucible::storage {

class memory_store final : public kv_store {
 public:
  status write(const write_batch& batch, durability d = durability::buffered) override;
  result<std::optional<std::string>> get(family cf, std::string_view key) override;
  status scan(family cf, std::string_view prefix, const visitor& visit) override;
  std::string describe() const override { return "memory"; }

  // Fault injection: the next n calls to write() fail with errc::io and apply
  // nothing (as a full disk would). Replaces any earlier count.
  void fail_next_writes(int n);
  // How many writes failed by injection so far, and how many succeeded.
  int failed_writes() const;
  int applied_writes() const;

 private:
  mutable std::mutex mu_;
  std::array<std::map<std::string, std::string, std::less<>>, family_count> data_;  // GUARDED_BY(mu_)
  int fail_next_ = 0;                                                              // GUARDED_BY(mu_)
  int failed_ = 0;                                                                 // GUARDED_BY(mu_)
  int applied_ = 0;                                                                // GUARDED_BY(mu_)
};

}  // namespace crucible::storage
