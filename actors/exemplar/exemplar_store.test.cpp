// The exemplar store on the memory store and on RocksDB: idempotent inserts,
// incremental statistics, sampling through the store, failures.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "actors/exemplar/chi_square.hpp"
#include "actors/exemplar/exemplar_store.hpp"
#include "storage/memory_store.hpp"
#include "storage/rocksdb_store.hpp"
#include "storage/temp_dir.hpp"

using namespace crucible;
using namespace crucible::exemplar;

namespace {

std::unique_ptr<exemplar_store> open_memory(std::shared_ptr<storage::kv_store> kv = nullptr, exemplar_options o = {}) {
  if (!kv) kv = std::make_shared<storage::memory_store>();
  auto s = exemplar_store::open(std::move(kv), o);
  if (!s.ok()) FAIL(s.error().text());
  return std::move(s).value();
}

exemplar_input make(std::string task, std::string id, double score) {
  return {std::move(task), id, "code of " + id, score};
}

}  // namespace

TEST_CASE("a re-delivered exemplar changes nothing") {
  auto kv = std::make_shared<storage::memory_store>();
  auto s = open_memory(kv);
  CHECK(*s->insert(make("t", "c1", 1.23)) == insert_outcome::inserted);
  auto before = *s->stats("t");
  int writes = kv->applied_writes();
  CHECK(*s->insert(make("t", "c1", 1.23)) == insert_outcome::duplicate);
  CHECK(*s->insert(make("t", "c1", 9.99)) == insert_outcome::duplicate);  // same candidate, other score
  CHECK(kv->applied_writes() == writes);
  CHECK(*s->stats("t") == before);
  REQUIRE(before.size() == 1);
  CHECK(before[0].count == 1);
}

TEST_CASE("ids repeated inside one batch are inserted once") {
  auto s = open_memory();
  std::vector<exemplar_input> batch = {make("t", "a", 1.0), make("t", "a", 1.0), make("u", "a", 2.0)};
  auto r = s->insert_batch(batch);
  REQUIRE(r.ok());
  CHECK(*r == std::vector<insert_outcome>{insert_outcome::inserted, insert_outcome::duplicate, insert_outcome::inserted});
  CHECK((*s->stats("t"))[0].count == 1);
  CHECK((*s->stats("u"))[0].count == 1);
}

TEST_CASE("bucket statistics count and average the scores of each bucket") {
  auto s = open_memory();
  REQUIRE(s->insert(make("t", "a", 1.01)).ok());
  REQUIRE(s->insert(make("t", "b", 1.07)).ok());
  REQUIRE(s->insert(make("t", "c", 2.50)).ok());
  REQUIRE(s->insert(make("other", "d", 7.0)).ok());
  auto st = *s->stats("t");
  REQUIRE(st.size() == 2);
  CHECK(st[0].bucket == 10);
  CHECK(st[0].count == 2);
  CHECK(st[0].mean() == doctest::Approx(1.04));
  CHECK(st[0].range.low == doctest::Approx(1.0));
  CHECK(st[1].bucket == 25);
  CHECK(st[1].count == 1);
  CHECK(*s->recount("t") == st);
  CHECK(*s->tasks() == std::vector<std::string>{"other", "t"});
}

TEST_CASE("a failed write leaves store and statistics unchanged and can be retried") {
  auto kv = std::make_shared<storage::memory_store>();
  auto s = open_memory(kv);
  REQUIRE(s->insert(make("t", "a", 1.0)).ok());
  kv->fail_next_writes(1);
  auto r = s->insert(make("t", "b", 1.0));
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().code == errc::io);
  CHECK((*s->stats("t"))[0].count == 1);
  CHECK(*s->recount("t") == *s->stats("t"));
  CHECK(*s->insert(make("t", "b", 1.0)) == insert_outcome::inserted);  // the retry is not a duplicate
  CHECK((*s->stats("t"))[0].count == 2);
}

TEST_CASE("bad exemplars are refused with a reason") {
  auto s = open_memory();
  CHECK(s->insert(make("", "a", 1.0)).error().code == errc::invalid_argument);
  CHECK(s->insert(make(std::string("t\0x", 3), "a", 1.0)).error().code == errc::invalid_argument);
  CHECK(s->insert(make("t", "", 1.0)).error().code == errc::invalid_argument);
  auto nan = s->insert(make("t", "a", NAN));
  REQUIRE_FALSE(nan.ok());
  CHECK(nan.error().message.find("t") != std::string::npos);
  rng gen(1);
  CHECK(s->sample("t", 2, 0.0, gen).error().code == errc::invalid_argument);
}

TEST_CASE("a store reopened with another bucketing refuses to open") {
  auto kv = std::make_shared<storage::memory_store>();
  open_memory(kv);
  exemplar_options o;
  o.bucket_width = 0.2;
  auto again = exemplar_store::open(kv, o);
  REQUIRE_FALSE(again.ok());
  CHECK(again.error().message.find("linear:0.1") != std::string::npos);
}

TEST_CASE("sampling returns exemplars from distinct buckets with their codes and bucket means") {
  auto s = open_memory();
  REQUIRE(s->insert(make("t", "low", 1.02)).ok());
  REQUIRE(s->insert(make("t", "mid", 1.55)).ok());
  REQUIRE(s->insert(make("t", "mid2", 1.57)).ok());
  REQUIRE(s->insert(make("t", "high", 3.1)).ok());
  rng gen(4);
  for (int i = 0; i < 200; ++i) {
    auto r = s->sample("t", 2, 0.5, gen);
    REQUIRE(r.ok());
    REQUIRE(r->size() == 2);
    CHECK((*r)[0].bucket != (*r)[1].bucket);
    for (const auto& e : *r) {
      CHECK(e.code == "code of " + e.id);
      if (e.bucket == 15) CHECK(e.bucket_mean == doctest::Approx(1.56));
    }
  }
  CHECK(s->sample("unknown", 2, 1.0, gen)->empty());
  CHECK(s->sample("t", 9, 1.0, gen)->size() == 3);  // fewer buckets than n
}

TEST_CASE("bucket frequencies through the store follow equation 1") {
  auto s = open_memory();
  // Buckets 10, 12, 15, 21 with means 1.05, 1.25, 1.55, 2.15.
  std::vector<std::pair<double, int>> layout = {{1.05, 5}, {1.25, 2}, {1.55, 9}, {2.15, 1}};
  int id = 0;
  for (auto [score, count] : layout)
    for (int i = 0; i < count; ++i) REQUIRE(s->insert(make("t", std::to_string(id++), score)).ok());
  std::vector<double> means = {1.05, 1.25, 1.55, 2.15};
  std::map<std::int32_t, std::size_t> index = {{10, 0}, {12, 1}, {15, 2}, {21, 3}};
  double tau = 0.5;
  auto p = equation1(means, tau);
  std::vector<double> observed(16, 0), expected(16, 0);
  rng gen(2024);
  const int draws = 100000;
  for (int d = 0; d < draws; ++d) {
    auto r = s->sample("t", 2, tau, gen);
    REQUIRE(r->size() == 2);
    observed[index[(*r)[0].bucket] * 4 + index[(*r)[1].bucket]] += 1;
  }
  std::vector<double> o, e;
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t j = 0; j < 4; ++j)
      if (i != j) {
        o.push_back(observed[i * 4 + j]);
        e.push_back(draws * p[i] * p[j] / (1 - p[i]));
      } else {
        CHECK(observed[i * 4 + j] == 0);
      }
  auto f = testing::goodness_of_fit(o, e);
  CHECK(f.p_value > 0.001);
}

TEST_CASE("a rocksdb-backed store keeps exemplars and statistics across a reopen") {
  storage::temp_dir dir("exemplar-reopen");
  std::vector<bucket_summary> before;
  {
    auto kv = storage::open_rocksdb(dir.sub("db"));
    REQUIRE(kv.ok());
    auto s = exemplar_store::open(std::shared_ptr<storage::kv_store>(std::move(kv).value()));
    REQUIRE(s.ok());
    for (int i = 0; i < 50; ++i) REQUIRE((*s)->insert(make("task/1", "c" + std::to_string(i), 1.0 + i * 0.037)).ok());
    before = *(*s)->stats("task/1");
  }
  auto kv = storage::open_rocksdb(dir.sub("db"));
  REQUIRE(kv.ok());
  auto s = exemplar_store::open(std::shared_ptr<storage::kv_store>(std::move(kv).value()));
  REQUIRE(s.ok());
  CHECK(*(*s)->stats("task/1") == before);
  CHECK(*(*s)->recount("task/1") == before);
  CHECK(*(*s)->insert(make("task/1", "c7", 1.0)) == insert_outcome::duplicate);
}

TEST_CASE("a batch with one bad exemplar writes nothing and leaves the statistics as they were") {
  auto kv = std::make_shared<storage::memory_store>();
  auto s = open_memory(kv);
  REQUIRE(s->insert(make("t", "a", 1.0)).ok());
  auto before = *s->stats("t");
  int writes = kv->applied_writes();
  std::vector<exemplar_input> batch = {make("t", "b", 1.01), make("t", "c", 2.0), make("u", "d", 3.0), make("t", "e", NAN)};
  auto r = s->insert_batch(batch);
  REQUIRE_FALSE(r.ok());
  CHECK(r.error().message.find("exemplar e of task t") != std::string::npos);
  CHECK(kv->applied_writes() == writes);
  CHECK(*s->stats("t") == before);
  CHECK(s->stats("u")->empty());
  CHECK(*s->insert(make("t", "b", 1.01)) == insert_outcome::inserted);
  CHECK((*s->stats("t"))[0].count == 2);
  CHECK(*s->recount("t") == *s->stats("t"));
}

TEST_CASE("the selector and the bucket scale come from the options") {
  exemplar_options o;
  o.selector = selector_kind::uniform;
  o.scale = bucket_scale::logarithmic;
  o.bucket_width = std::log(2.0);
  auto s = open_memory(nullptr, o);
  CHECK(s->describe().find("logarithmic") != std::string::npos);
  CHECK(s->describe().find("uniform") != std::string::npos);
  // Log buckets: [1,2) holds 1.0 and 1.9; [2,4) holds 3.0; 0 is refused.
  REQUIRE(s->insert(make("t", "a", 1.0)).ok());
  REQUIRE(s->insert(make("t", "b", 1.9)).ok());
  REQUIRE(s->insert(make("t", "c", 3.0)).ok());
  CHECK(s->insert(make("t", "z", 0.0)).error().code == errc::invalid_argument);
  auto st = *s->stats("t");
  REQUIRE(st.size() == 2);
  CHECK(st[0].count == 2);
  CHECK(st[1].range.low == doctest::Approx(2.0));
  // Uniform selection may return two exemplars of one bucket, which the
  // bucket selector never does.
  rng gen(8);
  bool same_bucket = false;
  for (int i = 0; i < 200 && !same_bucket; ++i) {
    auto r = *s->sample("t", 2, 1.0, gen);
    REQUIRE(r.size() == 2);
    CHECK(r[0].id != r[1].id);
    same_bucket = r[0].bucket == r[1].bucket;
  }
  CHECK(same_bucket);
}

TEST_CASE("an island store samples inside one island per request") {
  exemplar_options o;
  o.selector = selector_kind::island;
  o.islands = 2;
  o.migration_interval = 1000;
  auto s = open_memory(nullptr, o);
  // Inserted in order, ordinals 0..5 in bucket 10: even ordinals on island 0.
  for (int i = 0; i < 6; ++i) REQUIRE(s->insert(make("t", "a" + std::to_string(i), 1.0)).ok());
  for (int i = 0; i < 6; ++i) REQUIRE(s->insert(make("t", "b" + std::to_string(i), 2.0)).ok());
  rng gen(1);
  for (int request = 0; request < 40; ++request) {
    auto r = *s->sample("t", 2, 1.0, gen);
    REQUIRE(r.size() == 2);
    for (const auto& e : r) CHECK((e.id[1] - '0') % 2 == request % 2);
  }
}
