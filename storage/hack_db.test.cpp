// The hack database over both kv_store implementations: idempotent add,
// get and list, local similarity, and a database that survives reopening.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>

#include "storage/hack_db.hpp"
#include "storage/memory_store.hpp"
#include "storage/rocksdb_store.hpp"
#include "storage/temp_dir.hpp"
#include "runtime/base/error_text.hpp"

using namespace crucible;
using namespace crucible::storage;

namespace {

hack_record sample_hack(std::string id, std::string code, std::string reason = "side stream") {
  hack_record r;
  r.candidate_id = std::move(id);
  r.task_id = "level1/matmul";
  r.code = std::move(code);
  r.reason = std::move(reason);
  r.detector = "static";
  r.features = {"side_stream"};
  return r;
}

const char* side_stream = R"(
class ModelNew(nn.Module):
    def forward(self, a, b):
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            out = a @ b
        return out
)";
const char* side_stream_renamed = R"(
class ModelNew(nn.Module):
    def forward(self, x, w):
        side = torch.cuda.Stream()   # launch elsewhere
        with torch.cuda.stream(side):
            y = torch.matmul(x, w)
        return y
)";
const char* cache_by_pointer = R"(
class ModelNew(nn.Module):
    cache = {}
    def forward(self, a, b):
        key = (a.data_ptr(), b.data_ptr())
        if key in self.cache:
            return self.cache[key]
        self.cache[key] = a @ b
        return self.cache[key]
)";
const char* exit_early = R"(
import os
class ModelNew(nn.Module):
    def forward(self, a, b):
        os._exit(0)
)";

}  // namespace

TEST_CASE("a hack is recorded once: a second add of its candidate id is a duplicate and changes nothing") {
  hack_db db(std::make_shared<memory_store>());
  auto first = db.add(sample_hack("c1", side_stream));
  REQUIRE(first.ok());
  CHECK(*first == hack_add_outcome::added);
  auto again = db.add(sample_hack("c1", cache_by_pointer, "another reason"));
  REQUIRE(again.ok());
  CHECK(*again == hack_add_outcome::duplicate);
  auto got = db.get("c1");
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  CHECK((*got)->code == side_stream);
  CHECK((*got)->reason == "side stream");
  CHECK((*got)->features == std::vector<std::string>{"side_stream"});
  CHECK((*got)->recorded_ns > 0);
  auto missing = db.get("c2");
  REQUIRE(missing.ok());
  CHECK_FALSE(missing->has_value());
}

TEST_CASE("an empty candidate id or one with a NUL byte is refused with a reason") {
  hack_db db(std::make_shared<memory_store>());
  auto empty = db.add(sample_hack("", side_stream));
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.error().code == errc::invalid_argument);
  CHECK(empty.error().message.find("candidate id") != std::string::npos);
  auto nul = db.add(sample_hack(std::string("a\0b", 3), side_stream));
  REQUIRE_FALSE(nul.ok());
  CHECK(nul.error().code == errc::invalid_argument);
}

TEST_CASE("a failed write records nothing and the same hack can be added afterwards") {
  auto kv = std::make_shared<memory_store>();
  hack_db db(kv);
  kv->fail_next_writes(1);
  auto failed = db.add(sample_hack("c1", side_stream));
  REQUIRE_FALSE(failed.ok());
  CHECK(failed.error().code == errc::io);
  CHECK(db.list()->empty());
  CHECK(*db.add(sample_hack("c1", side_stream)) == hack_add_outcome::added);
}

TEST_CASE("list returns every hack in candidate id order") {
  hack_db db(std::make_shared<memory_store>());
  REQUIRE(db.add(sample_hack("b", cache_by_pointer)).ok());
  REQUIRE(db.add(sample_hack("a", side_stream)).ok());
  REQUIRE(db.add(sample_hack("c", exit_early)).ok());
  auto all = db.list();
  REQUIRE(all.ok());
  REQUIRE(all->size() == 3);
  CHECK((*all)[0].candidate_id == "a");
  CHECK((*all)[1].candidate_id == "b");
  CHECK((*all)[2].candidate_id == "c");
}

TEST_CASE("the most similar known hack is the one with the same trick, whatever its variable names") {
  hack_db db(std::make_shared<memory_store>());
  REQUIRE(db.add(sample_hack("stream", side_stream)).ok());
  REQUIRE(db.add(sample_hack("cache", cache_by_pointer, "caching by address")).ok());
  REQUIRE(db.add(sample_hack("exit", exit_early, "exits mid-check")).ok());

  auto near = db.similar(side_stream_renamed, 3);
  REQUIRE(near.ok());
  REQUIRE_FALSE(near->empty());
  CHECK(near->front().hack.candidate_id == "stream");
  for (std::size_t i = 1; i < near->size(); ++i) CHECK((*near)[i - 1].similarity >= (*near)[i].similarity);

  auto cached = db.similar("def forward(self, x):\n    if x.data_ptr() in self.cache: return self.cache[x.data_ptr()]", 1);
  REQUIRE(cached.ok());
  REQUIRE(cached->size() == 1);
  CHECK(cached->front().hack.candidate_id == "cache");

  auto self = db.similar(exit_early, 1);
  REQUIRE(self.ok());
  CHECK(self->front().hack.candidate_id == "exit");
  CHECK(self->front().similarity == doctest::Approx(1.0));
}

TEST_CASE("similar returns at most k hacks and none for code sharing no token with any") {
  hack_db db(std::make_shared<memory_store>());
  CHECK(db.similar(side_stream, 3)->empty());
  REQUIRE(db.add(sample_hack("stream", side_stream)).ok());
  REQUIRE(db.add(sample_hack("cache", cache_by_pointer)).ok());
  CHECK(db.similar(side_stream, 1)->size() == 1);
  CHECK(db.similar("zzz qqq", 3)->empty());
}

TEST_CASE("tokens keep dotted names whole, add their last part and adjacent pairs, and drop comments") {
  auto t = code_tokens("s = torch.cuda.Stream()  # Secret");
  auto has = [&](const std::string& x) { return std::find(t.begin(), t.end(), x) != t.end(); };
  CHECK(has("torch.cuda.stream"));
  CHECK(has("stream"));
  CHECK(has("s"));
  CHECK(has("= torch.cuda.stream"));
  CHECK_FALSE(has("secret"));
}

TEST_CASE("hacks written through a RocksDB store are there after reopening, and another hack_db sees them") {
  temp_dir dir("hack-db");
  {
    auto kv = open_rocksdb(dir.sub("db"));
    REQUIRE(kv.ok());
    std::shared_ptr<kv_store> shared = std::move(*kv);
    hack_db writer(shared), reader(shared);
    REQUIRE(reader.similar(side_stream, 3)->empty());
    REQUIRE(writer.add(sample_hack("stream", side_stream)).ok());
    auto seen = reader.similar(side_stream_renamed, 3);
    REQUIRE(seen.ok());
    CHECK(seen->size() == 1);
  }
  auto kv = open_rocksdb(dir.sub("db"));
  REQUIRE(kv.ok());
  hack_db db(std::shared_ptr<kv_store>(std::move(*kv)));
  auto got = db.get("stream");
  REQUIRE(got.ok());
  REQUIRE(got->has_value());
  CHECK((*got)->task_id == "level1/matmul");
  CHECK(*db.add(sample_hack("stream", exit_early)) == hack_add_outcome::duplicate);
}

TEST_CASE("a record that does not decode is reported as corrupt, naming its key") {
  auto kv = std::make_shared<memory_store>();
  write_batch b;
  b.put(family::hacks, "broken", "{not json");
  REQUIRE(kv->write(b).ok());
  hack_db db(kv);
  auto got = db.get("broken");
  REQUIRE_FALSE(got.ok());
  CHECK(got.error().code == errc::corrupt);
  CHECK(got.error().message.find("broken") != std::string::npos);
  auto all = db.list();
  REQUIRE_FALSE(all.ok());
  CHECK(all.error().code == errc::corrupt);
}

TEST_CASE("a read-only open sees the hacks that the store's writer, still holding it open, recorded before") {
  temp_dir dir("hack-db-ro");
  auto kv = open_rocksdb(dir.sub("db"));
  REQUIRE(kv.ok());
  hack_db writer(std::shared_ptr<kv_store>(std::move(*kv)));
  REQUIRE(writer.add(sample_hack("stream", side_stream)).ok());

  rocksdb_options ro;
  ro.read_only = true;
  ro.create_if_missing = false;
  auto reader_kv = open_rocksdb(dir.sub("db"), ro);
  REQUIRE_MESSAGE(reader_kv.ok(), crucible::error_text(reader_kv));
  hack_db reader(std::shared_ptr<kv_store>(std::move(*reader_kv)));
  auto near = reader.similar(side_stream_renamed, 3);
  REQUIRE(near.ok());
  REQUIRE(near->size() == 1);
  CHECK(near->front().hack.candidate_id == "stream");
  CHECK_FALSE(reader.add(sample_hack("other", exit_early)).ok());  // read-only: writes fail as values
}
