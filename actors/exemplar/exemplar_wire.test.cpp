// The actor's messages survive a round trip through verified envelopes.
#include <doctest/doctest.h>

#include "actors/exemplar/exemplar_wire.hpp"
#include "messages/codec.hpp"

using namespace crucible;
using namespace crucible::exemplar;

TEST_CASE("an exemplar answer read back from a verified envelope has every exemplar") {
  exemplar_answer a{"level1/19", {{"level1/19", "c1", "code one", 1.42, 14, 1.45}, {"level1/19", "c2", "code two", 3.1, 31, 3.05}}, {}};
  messages::envelope_writer w;
  auto bytes = w.finish(build_answer(w.fbb(), a), "exemplar", "q-1");
  auto env = messages::open(bytes);
  REQUIRE(env.ok());
  const auto* answer = (*env)->payload_as_ExemplarAnswer();
  REQUIRE(answer != nullptr);
  CHECK(messages::str(answer->task_id()) == "level1/19");
  CHECK(answer->error() == nullptr);
  REQUIRE(answer->exemplars()->size() == 2);
  CHECK(messages::str(answer->exemplars()->Get(1)->code()) == "code two");
  CHECK(answer->exemplars()->Get(1)->bucket() == 31);
  CHECK(answer->exemplars()->Get(0)->bucket_mean() == 1.45);
}

TEST_CASE("a query and a settlement convert from their tables") {
  messages::envelope_writer w;
  auto bytes = w.finish(build_query(w.fbb(), {"t", 3, 0.7, 99}), "rollout");
  auto env = messages::open(bytes);
  REQUIRE(env.ok());
  auto q = query_from(*(*env)->payload_as_ExemplarQuery());
  CHECK(q.task_id == "t");
  CHECK(q.n == 3);
  CHECK(q.temperature == 0.7);
  CHECK(q.seed == 99);

  messages::envelope_writer s;
  auto sb = s.finish(msg::CreateSettlementDirect(s.fbb(), "c7", "t", "g", msg::SettlementStatus::Hack, 2.5, 2.51, false,
                                                 "timer patched", "code"),
                     "referee");
  auto senv = messages::open(sb);
  REQUIRE(senv.ok());
  auto st = settlement_from(*(*senv)->payload_as_Settlement());
  CHECK(st.candidate_id == "c7");
  CHECK(st.status == settlement_status::hack);
  CHECK(st.reward == 2.5);
  CHECK(st.code == "code");
}

TEST_CASE("a bucket report read back from a verified envelope has every bucket with its range and chance") {
  bucket_report r{"cpu/relu",
                  {{12, {1.2, 1.3}, 2, 2'500'000}, {20, {2.0, 2.1}, 1, 2'050'000}},
                  {0.3, 0.7},
                  selector_kind::bucket,
                  1.0,
                  bucket_scale::linear,
                  0.1};
  messages::envelope_writer w;
  auto bytes = w.finish(build_buckets(w.fbb(), r), "exemplar", "cpu/relu");
  auto env = messages::open(bytes);
  REQUIRE(env.ok());
  CHECK(messages::describe(**env).find("ExemplarBuckets id=cpu/relu from exemplar (task=cpu/relu buckets=2 exemplars=3)") ==
        0);
  const auto* b = (*env)->payload_as_ExemplarBuckets();
  REQUIRE(b != nullptr);
  CHECK(messages::str(b->task_id()) == "cpu/relu");
  CHECK(messages::str(b->selector()) == "bucket");
  CHECK(messages::str(b->scale()) == "linear");
  CHECK(b->bucket_width() == 0.1);
  REQUIRE(b->buckets()->size() == 2);
  const auto* first = b->buckets()->Get(0);
  CHECK(first->bucket() == 12);
  CHECK(first->low() == 1.2);
  CHECK(first->high() == 1.3);
  CHECK(first->count() == 2);
  CHECK(first->mean() == doctest::Approx(1.25));
  CHECK(b->buckets()->Get(1)->probability() == 0.7);
}
