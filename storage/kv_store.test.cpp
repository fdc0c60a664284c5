// The kv_store contract, run against every implementation.
#include <doctest/doctest.h>

#include <fstream>
#include <string>
#include <vector>

#include "storage/kv_store.hpp"
#include "storage/memory_store.hpp"
#include "storage/rocksdb_store.hpp"
#include "storage/temp_dir.hpp"

using namespace crucible;
using namespace crucible::storage;

namespace {

struct memory_impl {
  std::unique_ptr<kv_store> open() { return std::make_unique<memory_store>(); }
};

struct rocksdb_impl {
  temp_dir dir{"kv-contract"};
  std::unique_ptr<kv_store> open() {
    auto db = open_rocksdb(dir.sub("db"));
    if (!db.ok()) FAIL(db.error().text());
    return std::move(db).value();
  }
};

std::optional<std::string> read(kv_store& s, family cf, std::string_view key) {
  auto r = s.get(cf, key);
  REQUIRE(r.ok());
  return *r;
}

std::vector<std::string> keys_with_prefix(kv_store& s, family cf, std::string_view prefix) {
  std::vector<std::string> keys;
  auto st = s.scan(cf, prefix, [&](std::string_view k, std::string_view) {
    keys.emplace_back(k);
    return true;
  });
  REQUIRE(st.ok());
  return keys;
}

}  // namespace

TEST_CASE_TEMPLATE("a written value is read back and a missing key is absent", impl, memory_impl, rocksdb_impl) {
  impl i;
  auto s = i.open();
  write_batch b;
  b.put(family::jobs, "job/1", "payload");
  REQUIRE(s->write(b).ok());
  CHECK(read(*s, family::jobs, "job/1") == std::optional<std::string>("payload"));
  CHECK_FALSE(read(*s, family::jobs, "job/2").has_value());
}

TEST_CASE_TEMPLATE("families are separate key spaces", impl, memory_impl, rocksdb_impl) {
  impl i;
  auto s = i.open();
  write_batch b;
  b.put(family::exemplars, "k", "exemplar");
  b.put(family::buckets, "k", "bucket");
  REQUIRE(s->write(b, durability::synced).ok());
  CHECK(read(*s, family::exemplars, "k") == std::optional<std::string>("exemplar"));
  CHECK(read(*s, family::buckets, "k") == std::optional<std::string>("bucket"));
  CHECK_FALSE(read(*s, family::hacks, "k").has_value());
}

TEST_CASE_TEMPLATE("a batch applies puts and erases in order", impl, memory_impl, rocksdb_impl) {
  impl i;
  auto s = i.open();
  write_batch b;
  b.put(family::meta, "a", "1");
  b.put(family::meta, "b", "2");
  REQUIRE(s->write(b).ok());
  write_batch c;
  c.erase(family::meta, "a");
  c.put(family::meta, "b", "3");
  c.put(family::meta, "c", "4");
  c.erase(family::meta, "c");
  REQUIRE(s->write(c).ok());
  CHECK_FALSE(read(*s, family::meta, "a").has_value());
  CHECK(read(*s, family::meta, "b") == std::optional<std::string>("3"));
  CHECK_FALSE(read(*s, family::meta, "c").has_value());
}

TEST_CASE_TEMPLATE("a scan visits exactly the keys with the prefix in byte order", impl, memory_impl, rocksdb_impl) {
  impl i;
  auto s = i.open();
  write_batch b;
  // Bytes above 0x7f must sort after ASCII (unsigned comparison), and a zero
  // byte inside a key is an ordinary byte.
  const std::string high = std::string("t1/") + static_cast<char>(0xff);
  const std::string zero = std::string("t1/\0x", 4);
  for (const std::string& k : {std::string("t0/z"), std::string("t1/b"), high, std::string("t1/a"), zero,
                               std::string("t2/a"), std::string("t1")}) {
    b.put(family::candidates, k, "v");
  }
  REQUIRE(s->write(b).ok());
  CHECK(keys_with_prefix(*s, family::candidates, "t1/") ==
        std::vector<std::string>{zero, "t1/a", "t1/b", high});
  CHECK(keys_with_prefix(*s, family::candidates, "t9").empty());
  CHECK(keys_with_prefix(*s, family::candidates, "").size() == 7);
}

TEST_CASE_TEMPLATE("a scan stops when the visitor returns false", impl, memory_impl, rocksdb_impl) {
  impl i;
  auto s = i.open();
  write_batch b;
  for (char c = 'a'; c <= 'j'; ++c) b.put(family::hacks, std::string("h/") + c, std::string(1, c));
  REQUIRE(s->write(b).ok());
  std::string seen;
  REQUIRE(s->scan(family::hacks, "h/", [&](std::string_view, std::string_view v) {
                seen += v;
                return seen.size() < 3;
              }).ok());
  CHECK(seen == "abc");
}

TEST_CASE_TEMPLATE("values may hold any bytes and be large", impl, memory_impl, rocksdb_impl) {
  impl i;
  auto s = i.open();
  std::string big(3 << 20, '\0');
  for (std::size_t k = 0; k < big.size(); ++k) big[k] = static_cast<char>(k * 131 % 256);
  write_batch b;
  b.put(family::exemplars, "big", big);
  REQUIRE(s->write(b).ok());
  CHECK(read(*s, family::exemplars, "big") == std::optional<std::string>(big));
}

TEST_CASE_TEMPLATE("the text form names the implementation", impl, memory_impl, rocksdb_impl) {
  impl i;
  auto s = i.open();
  std::string d = s->describe();
  CHECK((d == "memory" || d.rfind("rocksdb:/", 0) == 0));
}

TEST_CASE("a rocksdb store keeps its data across a reopen") {
  temp_dir dir("kv-reopen");
  {
    auto s = open_rocksdb(dir.sub("db"));
    REQUIRE(s.ok());
    write_batch b;
    b.put(family::jobs, "j/1", "queued");
    b.put(family::exemplars, "e/1", "code");
    REQUIRE((*s)->write(b).ok());
  }
  auto s = open_rocksdb(dir.sub("db"));
  REQUIRE(s.ok());
  CHECK(read(**s, family::jobs, "j/1") == std::optional<std::string>("queued"));
  CHECK(read(**s, family::exemplars, "e/1") == std::optional<std::string>("code"));
}

TEST_CASE("a second open of the same rocksdb directory fails naming the path") {
  temp_dir dir("kv-lock");
  auto first = open_rocksdb(dir.sub("db"));
  REQUIRE(first.ok());
  auto second = open_rocksdb(dir.sub("db"));
  REQUIRE_FALSE(second.ok());
  CHECK(second.error().code == errc::io);
  CHECK(second.error().message.find(dir.sub("db")) != std::string::npos);
}

TEST_CASE("opening rocksdb where a plain file stands fails naming the path") {
  temp_dir dir("kv-file");
  std::ofstream(dir.sub("file")) << "not a database";
  auto s = open_rocksdb(dir.sub("file"));
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find(dir.sub("file")) != std::string::npos);
}

TEST_CASE("opening a missing rocksdb directory without create fails") {
  temp_dir dir("kv-missing");
  rocksdb_options o;
  o.create_if_missing = false;
  auto s = open_rocksdb(dir.sub("nothing"), o);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find(dir.sub("nothing")) != std::string::npos);
}

TEST_CASE("the memory store fails exactly the next n writes and applies none of them") {
  memory_store s;
  s.fail_next_writes(2);
  write_batch b;
  b.put(family::meta, "k", "v");
  b.put(family::buckets, "k", "v");
  auto first = s.write(b);
  REQUIRE_FALSE(first.ok());
  CHECK(first.error().code == errc::io);
  CHECK_FALSE(s.write(b).ok());
  CHECK_FALSE(read(s, family::meta, "k").has_value());
  CHECK_FALSE(read(s, family::buckets, "k").has_value());
  CHECK(s.write(b).ok());
  CHECK(read(s, family::meta, "k").has_value());
  CHECK(read(s, family::buckets, "k").has_value());
  CHECK(s.failed_writes() == 2);
  CHECK(s.applied_writes() == 1);
}

TEST_CASE("every family has a distinct name") {
  std::vector<std::string> names;
  for (int i = 0; i < family_count; ++i) names.emplace_back(family_name(static_cast<family>(i)));
  for (std::size_t a = 0; a < names.size(); ++a)
    for (std::size_t b = a + 1; b < names.size(); ++b) CHECK(names[a] != names[b]);
}
