// The storage interface every durable part of crucible writes through: named
// column families of ordered byte keys, atomic batches, prefix scans.
// Implementations: rocksdb_store (real, storage/rocksdb_store.hpp) and
// memory_store (a test seam with fault injection, storage/memory_store.hpp).
//
// Who calls it: the hub's job ledger, the referee's candidate ledger, the
// exemplar store, the hack database, each from its own actor. An instance is
// thread-safe (RocksDB is; the memory store takes a mutex) and owned by the
// role that opened it. Errors come back as values (errc::io, errc::corrupt).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::storage {

// Column families: one per kind of record (design.md section 9).
enum class family : std::uint8_t {
  meta = 0,        // run metadata, counters
  jobs,            // the hub's durable job ledger
  candidates,      // the referee's candidate ledger
  exemplars,       // exemplar codes by task and id
  buckets,         // exemplar bucket statistics per task
  hacks,           // the hack database
};
inline constexpr int family_count = 6;
const char* family_name(family f);

// One atomic group of writes; applied all or nothing.
class write_batch {
 public:
  struct op {
    family cf;
    std::string key;
    std::optional<std::string> value;  // nullopt: delete
  };
  void put(family cf, std::string key, std::string value) {
    ops_.push_back({cf, std::move(key), std::move(value)});
  }
  void erase(family cf, std::string key) { ops_.push_back({cf, std::move(key), std::nullopt}); }
  const std::vector<op>& ops() const { return ops_; }
  bool empty() const { return ops_.empty(); }
  void clear() { ops_.clear(); }

 private:
  std::vector<op> ops_;
};

// Durability of a write. buffered survives a kill -9 of the process (the
// write-ahead log is in the kernel before write() returns); synced also
// survives a power loss (fsync before returning).
enum class durability : std::uint8_t { buffered, synced };

class kv_store {
 public:
  virtual ~kv_store() = default;

  // Applies the batch atomically; when it returns ok the batch is durable at
  // the requested level.
  virtual status write(const write_batch& batch, durability d = durability::buffered) = 0;

  // The value under key, or nullopt when there is none.
  virtual result<std::optional<std::string>> get(family cf, std::string_view key) = 0;

  // Calls visit(key, value) for every key starting with prefix, in key order,
  // until visit returns false.
  using visitor = std::function<bool(std::string_view key, std::string_view value)>;
  virtual status scan(family cf, std::string_view prefix, const visitor& visit) = 0;

  // Short text form for logs: "rocksdb:/path" or "memory".
  virtual std::string describe() const = 0;
};

}  // namespace crucible::storage
