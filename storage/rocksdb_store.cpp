#include "storage/rocksdb_store.hpp"

#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <exception>
#include <filesystem>
#include <shared_mutex>
#include <string_view>
#include <utility>
#include <vector>

#include <rocksdb/cache.h>
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/options.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/table.h>
#include <rocksdb/write_batch.h>
#include <spdlog/spdlog.h>
#include <sys/statvfs.h>

namespace crucible::storage {
namespace {

// A RocksDB status as a crucible error naming the database path.
error to_error(const rocksdb::Status& s, const std::string& path, std::string_view what) {
  errc code = s.IsCorruption() ? errc::corrupt : s.IsNotFound() ? errc::not_found : errc::io;
  return make_error(code, "rocksdb " + path + ": " + std::string(what) + ": " + s.ToString());
}

error from_exception(const std::exception& e, const std::string& path, std::string_view what) {
  return make_error(errc::io, "rocksdb " + path + ": " + std::string(what) + ": " + e.what());
}

// RocksDB's own log (its LOG file by default) goes to crucible's log instead.
// The LOG file sat in the database directory: on a full disk its writer
// failed, and Debian's librocksdb 7.8 (built with assertions) aborts the
// process at the next line logged after such a failure.
class spdlog_logger final : public rocksdb::Logger {
 public:
  explicit spdlog_logger(std::string path)
      : rocksdb::Logger(spdlog::should_log(spdlog::level::trace) ? rocksdb::InfoLogLevel::INFO_LEVEL
                                                                 : rocksdb::InfoLogLevel::WARN_LEVEL),
        path_(std::move(path)) {}
  using rocksdb::Logger::Logv;
  void Logv(const rocksdb::InfoLogLevel level, const char* format, va_list ap) override {
    if (level < GetInfoLogLevel()) return;
    char line[1024];
    std::vsnprintf(line, sizeof line, format, ap);
    spdlog::log(level >= rocksdb::InfoLogLevel::FATAL_LEVEL   ? spdlog::level::critical
                : level >= rocksdb::InfoLogLevel::ERROR_LEVEL ? spdlog::level::err
                : level >= rocksdb::InfoLogLevel::WARN_LEVEL  ? spdlog::level::warn
                                                              : spdlog::level::trace,
                "rocksdb {}: {}", path_, line);
  }

 private:
  std::string path_;
};

// The prefix of a key up to and including its first NUL byte.
class nul_prefix final : public rocksdb::SliceTransform {
 public:
  const char* Name() const override { return "crucible.NulPrefix"; }
  rocksdb::Slice Transform(const rocksdb::Slice& key) const override {
    const void* z = std::memchr(key.data(), 0, key.size());
    return rocksdb::Slice(key.data(), static_cast<const char*>(z) - key.data() + 1);
  }
  bool InDomain(const rocksdb::Slice& key) const override { return std::memchr(key.data(), 0, key.size()) != nullptr; }
};

// An open database: its handles, closed (handles first, deps.md) on destruction.
struct database {
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;    // every open handle, owned
  std::vector<rocksdb::ColumnFamilyHandle*> by_family;  // indexed by family
  database() = default;
  database(const database&) = delete;
  database& operator=(const database&) = delete;
  ~database() {
    if (!db) return;
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    db->Close().PermitUncheckedError();
    delete db;
  }
};

result<std::unique_ptr<database>> open_database(const std::string& dir, const rocksdb_options& options) {
  rocksdb::Options db_options;
  db_options.create_if_missing = options.create_if_missing;
  db_options.error_if_exists = options.error_if_exists;
  db_options.create_missing_column_families = true;
  db_options.max_background_jobs = options.background_jobs;
  db_options.info_log = std::make_shared<spdlog_logger>(dir);
  // What the write-ahead log holds is durable: no flush needed to close.
  db_options.avoid_flush_during_shutdown = true;

  rocksdb::ColumnFamilyOptions cf_options;
  cf_options.write_buffer_size = options.write_buffer_mib << 20;
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(options.block_cache_mib << 20);
  // Point lookups of absent keys (idempotency checks) skip files by bloom filter.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  cf_options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  if (options.insert_hint_by_nul_prefix)
    cf_options.memtable_insert_with_hint_prefix_extractor = std::make_shared<nul_prefix>();
  // A bloom filter over whole keys in the memtable too, so that the hub's
  // check of every new job id against acknowledged ones rarely searches
  // the skip list (about 2% of the memtable's memory).
  cf_options.memtable_whole_key_filtering = true;
  cf_options.memtable_prefix_bloom_size_ratio = 0.02;

  // Every column family already in the database must be opened, including
  // ones a newer crucible added; ours are created when missing.
  std::vector<std::string> names{rocksdb::kDefaultColumnFamilyName};
  for (int i = 0; i < family_count; ++i) names.emplace_back(family_name(static_cast<family>(i)));
  std::vector<std::string> existing;
  if (rocksdb::DB::ListColumnFamilies(db_options, dir, &existing).ok()) {
    for (const auto& name : existing) {
      bool known = false;
      for (const auto& n : names) known = known || n == name;
      if (!known) names.push_back(name);
    }
  }
  std::vector<rocksdb::ColumnFamilyDescriptor> descriptors;
  for (const auto& n : names) descriptors.emplace_back(n, cf_options);

  // A fresh directory made here, not by RocksDB, which logs an error while
  // it finds none.
  if (options.create_if_missing && !options.read_only) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return make_error(errc::io, "rocksdb " + dir + ": cannot create: " + ec.message());
  }
  auto d = std::make_unique<database>();
  rocksdb::Status s = options.read_only
                          ? rocksdb::DB::OpenForReadOnly(db_options, dir, descriptors, &d->handles, &d->db)
                          : rocksdb::DB::Open(db_options, dir, descriptors, &d->handles, &d->db);
  if (!s.ok()) return to_error(s, dir, "open");
  for (int i = 0; i < family_count; ++i) d->by_family.push_back(d->handles[static_cast<std::size_t>(i) + 1]);
  return d;
}

// Free bytes on the file system that holds dir (0 when unknown).
std::uint64_t free_bytes(const std::string& dir) {
  struct statvfs st {};
  if (::statvfs(dir.c_str(), &st) != 0) return 0;
  return static_cast<std::uint64_t>(st.f_bavail) * st.f_frsize;
}

class rocksdb_store final : public kv_store {
 public:
  rocksdb_store(std::string path, rocksdb_options options, std::unique_ptr<database> db)
      : path_(std::move(path)), options_(options), db_(std::move(db)) {}

  status write(const write_batch& batch, durability d) override {
    try {
      if (failed_) CRUCIBLE_TRY(reopen());
      std::shared_lock lock(mu_);
      if (!db_) return make_error(errc::io, "rocksdb " + path_ + ": closed after a failed reopen");
      rocksdb::WriteBatch wb;
      for (const auto& op : batch.ops()) {
        auto* cf = handle(op.cf);
        rocksdb::Status s = op.value ? wb.Put(cf, op.key, *op.value) : wb.Delete(cf, op.key);
        if (!s.ok()) return to_error(s, path_, "batch");
      }
      rocksdb::WriteOptions wo;
      wo.sync = d == durability::synced;
      wo.disableWAL = false;
      rocksdb::Status s = db_->db->Write(wo, &wb);
      if (!s.ok()) {
        failed_ = true;
        return to_error(s, path_, "write");
      }
      return status::success();
    } catch (const std::exception& e) {
      return from_exception(e, path_, "write");
    }
  }

  result<std::optional<std::string>> get(family cf, std::string_view key) override {
    try {
      std::shared_lock lock(mu_);
      if (!db_) return make_error(errc::io, "rocksdb " + path_ + ": closed after a failed reopen");
      std::string value;
      rocksdb::Status s =
          db_->db->Get(rocksdb::ReadOptions(), handle(cf), rocksdb::Slice(key.data(), key.size()), &value);
      if (s.IsNotFound()) return std::optional<std::string>();
      if (!s.ok()) return to_error(s, path_, std::string("get from ") + family_name(cf));
      return std::optional<std::string>(std::move(value));
    } catch (const std::exception& e) {
      return from_exception(e, path_, "get");
    }
  }

  status scan(family cf, std::string_view prefix, const visitor& visit) override {
    try {
      std::shared_lock lock(mu_);
      if (!db_) return make_error(errc::io, "rocksdb " + path_ + ": closed after a failed reopen");
      rocksdb::ReadOptions ro;
      ro.fill_cache = true;
      std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(ro, handle(cf)));
      for (it->Seek(rocksdb::Slice(prefix.data(), prefix.size())); it->Valid(); it->Next()) {
        rocksdb::Slice k = it->key();
        if (!k.starts_with(rocksdb::Slice(prefix.data(), prefix.size()))) break;
        rocksdb::Slice v = it->value();
        if (!visit(std::string_view(k.data(), k.size()), std::string_view(v.data(), v.size()))) break;
      }
      rocksdb::Status s = it->status();
      if (!s.ok()) return to_error(s, path_, std::string("scan of ") + family_name(cf));
      return status::success();
    } catch (const std::exception& e) {
      return from_exception(e, path_, "scan");
    }
  }

  std::string describe() const override { return "rocksdb:" + path_; }

 private:
  // After a failed write (a full disk) RocksDB refuses writes, and Debian's
  // librocksdb 7.8, built with assertions, aborts the process when a write
  // reaches a log writer that failed before, which its own recovery
  // (Resume, or its file manager once space returns) lets happen. So the
  // database is closed and opened again instead, once there is room for
  // that (a new write-ahead log, and the memtables the old one held
  // written out); until then the old instance keeps serving reads and
  // every write fails with the first error.
  status reopen() {
    std::unique_lock lock(mu_);
    if (!failed_) return {};
    constexpr std::uint64_t room_to_reopen = 4u << 20;
    if (db_ && free_bytes(path_) < room_to_reopen)
      return make_error(errc::io, "rocksdb " + path_ + ": write refused: No space left on device (" +
                                      std::to_string(free_bytes(path_)) + " bytes free, waiting for " +
                                      std::to_string(room_to_reopen) + ")");
    db_.reset();
    auto d = open_database(path_, options_);
    if (!d) return d.error();
    db_ = std::move(*d);
    failed_ = false;
    spdlog::info("rocksdb {}: reopened after a failed write; writes resume", path_);
    return {};
  }

  rocksdb::ColumnFamilyHandle* handle(family f) const {
    auto i = static_cast<std::size_t>(f);
    CRUCIBLE_CHECK(i < db_->by_family.size(), "storage family out of range");
    return db_->by_family[i];
  }

  const std::string path_;
  const rocksdb_options options_;
  // Reads and writes share mu_; reopening holds it alone.
  mutable std::shared_mutex mu_;
  std::unique_ptr<database> db_;     // GUARDED_BY(mu_); null after a failed reopen
  std::atomic<bool> failed_{false};  // a write failed: reopen before the next
};

}  // namespace

result<std::unique_ptr<kv_store>> open_rocksdb(const std::string& dir, rocksdb_options options) {
  try {
    auto d = open_database(dir, options);
    if (!d) return d.error();
    return std::unique_ptr<kv_store>(std::make_unique<rocksdb_store>(dir, options, std::move(*d)));
  } catch (const std::exception& e) {
    return from_exception(e, dir, "open");
  }
}

}  // namespace crucible::storage
