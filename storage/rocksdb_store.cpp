#include "storage/rocksdb_store.hpp"

#include <cstring>
#include <exception>
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

class rocksdb_store final : public kv_store {
 public:
  rocksdb_store(std::string path, rocksdb::DB* db, std::vector<rocksdb::ColumnFamilyHandle*> handles,
                std::vector<rocksdb::ColumnFamilyHandle*> by_family)
      : path_(std::move(path)), db_(db), handles_(std::move(handles)), by_family_(std::move(by_family)) {}

  ~rocksdb_store() override {
    // Handles must go before the database (deps.md, RocksDB gotcha).
    for (auto* h : handles_) db_->DestroyColumnFamilyHandle(h);
    db_->Close().PermitUncheckedError();
    delete db_;
  }

  status write(const write_batch& batch, durability d) override {
    try {
      rocksdb::WriteBatch wb;
      for (const auto& op : batch.ops()) {
        auto* cf = handle(op.cf);
        rocksdb::Status s = op.value ? wb.Put(cf, op.key, *op.value) : wb.Delete(cf, op.key);
        if (!s.ok()) return to_error(s, path_, "batch");
      }
      rocksdb::WriteOptions wo;
      wo.sync = d == durability::synced;
      wo.disableWAL = false;
      rocksdb::Status s = db_->Write(wo, &wb);
      if (!s.ok()) return to_error(s, path_, "write");
      return status::success();
    } catch (const std::exception& e) {
      return from_exception(e, path_, "write");
    }
  }

  result<std::optional<std::string>> get(family cf, std::string_view key) override {
    try {
      std::string value;
      rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), handle(cf), rocksdb::Slice(key.data(), key.size()), &value);
      if (s.IsNotFound()) return std::optional<std::string>();
      if (!s.ok()) return to_error(s, path_, std::string("get from ") + family_name(cf));
      return std::optional<std::string>(std::move(value));
    } catch (const std::exception& e) {
      return from_exception(e, path_, "get");
    }
  }

  status scan(family cf, std::string_view prefix, const visitor& visit) override {
    try {
      rocksdb::ReadOptions ro;
      ro.fill_cache = true;
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, handle(cf)));
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
  rocksdb::ColumnFamilyHandle* handle(family f) const {
    auto i = static_cast<std::size_t>(f);
    CRUCIBLE_CHECK(i < by_family_.size(), "storage family out of range");
    return by_family_[i];
  }

  std::string path_;
  rocksdb::DB* db_;
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;    // every open handle, owned
  std::vector<rocksdb::ColumnFamilyHandle*> by_family_;  // indexed by family
};

}  // namespace

result<std::unique_ptr<kv_store>> open_rocksdb(const std::string& dir, rocksdb_options options) {
  try {
    rocksdb::Options db_options;
    db_options.create_if_missing = options.create_if_missing;
    db_options.error_if_exists = options.error_if_exists;
    db_options.create_missing_column_families = true;
    db_options.max_background_jobs = options.background_jobs;

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

    rocksdb::DB* db = nullptr;
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    rocksdb::Status s = options.read_only
                            ? rocksdb::DB::OpenForReadOnly(db_options, dir, descriptors, &handles, &db)
                            : rocksdb::DB::Open(db_options, dir, descriptors, &handles, &db);
    if (!s.ok()) return to_error(s, dir, "open");

    std::vector<rocksdb::ColumnFamilyHandle*> by_family;
    for (int i = 0; i < family_count; ++i) by_family.push_back(handles[static_cast<std::size_t>(i) + 1]);
    return std::unique_ptr<kv_store>(
        std::make_unique<rocksdb_store>(dir, db, std::move(handles), std::move(by_family)));
  } catch (const std::exception& e) {
    return from_exception(e, dir, "open");
  }
}

}  // namespace crucible::storage
