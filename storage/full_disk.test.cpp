// The stores on a full disk: a size-limited tmpfs of the test's own
// (tests/support/small_fs.hpp). A write that finds no space fails with the
// path and "No space left on device", what was written before stays, and
// writes succeed again once space returns.
#include <doctest/doctest.h>

#include <string>

#include "storage/rocksdb_store.hpp"
#include "storage/segment_store.hpp"
#include "tests/support/small_fs.hpp"
#include "runtime/base/error_text.hpp"

using namespace crucible;
using namespace crucible::storage;
using crucible::testing::small_fs;

namespace {

std::unique_ptr<small_fs> small_disk(const std::string& name, std::size_t bytes) {
  auto fs = small_fs::make(name, bytes);
  if (!fs) MESSAGE("skipped: no small file system of the test's own: " << small_fs::why());
  return fs;
}

bool says_no_space(const std::string& text, const std::string& path) {
  return text.find(path) != std::string::npos && text.find("No space left on device") != std::string::npos;
}

std::string key(int i) { return "k" + std::to_string(i); }

}  // namespace

TEST_CASE("a RocksDB store on a full disk refuses writes naming its path, keeps what it wrote, and writes again when space returns") {
  auto fs = small_disk("rocksdb-full", 32u << 20);
  if (!fs) return;
  const std::string dir = fs->path() + "/db";
  rocksdb_options o;
  o.write_buffer_mib = 1;
  auto db = open_rocksdb(dir, o);
  REQUIRE(db.ok());
  kv_store& kv = **db;
  const std::string value(16 << 10, 'v');
  for (int i = 0; i < 100; ++i) {
    write_batch b;
    b.put(family::meta, key(i), value);
    REQUIRE(kv.write(b).ok());
  }
  fs->fill();
  int failed_at = -1;
  std::string why;
  for (int i = 100; i < 2000 && failed_at < 0; ++i) {
    write_batch b;
    b.put(family::meta, key(i), value);
    if (auto s = kv.write(b); !s.ok()) {
      failed_at = i;
      why = s.error().text();
    }
  }
  REQUIRE_MESSAGE(failed_at >= 0, "no write failed on a full disk");
  CHECK_MESSAGE(says_no_space(why, dir), why);
  write_batch again;
  again.put(family::meta, "while-full", "x");
  CHECK_FALSE(kv.write(again).ok());  // still full: still refused
  for (int i = 0; i < failed_at; ++i) REQUIRE(kv.get(family::meta, key(i))->has_value());
  CHECK_FALSE(kv.get(family::meta, key(failed_at))->has_value());

  fs->release();
  write_batch after;
  after.put(family::meta, "after", "space returned");
  auto resumed = kv.write(after);
  REQUIRE_MESSAGE(resumed.ok(), crucible::error_text(resumed));
  db->reset();
  auto reopened = open_rocksdb(dir, o);
  REQUIRE(reopened.ok());
  for (int i = 0; i < failed_at; ++i) CHECK((*reopened)->get(family::meta, key(i))->has_value());
  CHECK(*(*reopened)->get(family::meta, "after") == std::optional<std::string>("space returned"));
}

TEST_CASE("a segment append on a full disk leaves the segment whole, and appends to it work again when space returns") {
  auto fs = small_disk("segments-full", 4u << 20);
  if (!fs) return;
  auto log = open_file_segments(fs->path() + "/log");
  REQUIRE(log.ok());
  REQUIRE((*log)->append(1, "before").ok());
  fs->fill();
  auto s = (*log)->append(1, std::string(1 << 20, 'x'));
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().code == errc::io);
  CHECK_MESSAGE(says_no_space(s.error().text(), fs->path() + "/log/00000000000000000001.log"), s.error().text());
  CHECK(*(*log)->read(1) == "before");
  fs->release();
  REQUIRE((*log)->append(1, " after").ok());
  CHECK(*(*log)->read(1) == "before after");
}
