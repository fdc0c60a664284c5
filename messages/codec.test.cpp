#include <doctest/doctest.h>

#include <random>

#include "messages/codec.hpp"

using namespace crucible;
using namespace crucible::messages;

namespace {
bytes heartbeat(std::uint64_t seq) {
  envelope_writer w;
  auto hb = msg::CreateHeartbeat(w.fbb(), seq, 3, 9);
  return w.finish(hb, "worker-1", "hb");
}
}  // namespace

TEST_CASE("an encoded envelope opens with its kind, id, sender and fields") {
  bytes b = heartbeat(42);
  auto env = open(b);
  REQUIRE(env.ok());
  CHECK((*env)->payload_type() == msg::Payload::Heartbeat);
  CHECK(str((*env)->sender()) == "worker-1");
  CHECK(str((*env)->id()) == "hb");
  CHECK((*env)->payload_as_Heartbeat()->seq() == 42);
  CHECK((*env)->sent_ns() > 0);
  CHECK(describe(**env).find("Heartbeat id=hb from worker-1") == 0);
}

TEST_CASE("every truncation of a valid envelope is refused unless it only cut padding") {
  envelope_writer w;
  auto id = w.fbb().CreateString("job-1");
  auto kind = w.fbb().CreateString("echo");
  auto payload = w.fbb().CreateVector(std::vector<std::uint8_t>(100, 7));
  auto submit = msg::CreateJobSubmit(w.fbb(), id, kind, payload);
  bytes b = w.finish(submit, "client");
  REQUIRE(open(b).ok());
  for (std::size_t n = 0; n < b.size(); ++n) {
    auto r = open(std::span(b.data(), n));
    if (!r.ok()) continue;
    // FlatBuffers pads to alignment: a prefix may drop unreferenced bytes only.
    CHECK_MESSAGE(n + 8 > b.size(), "a prefix of " << n << " bytes was accepted");
    auto* j = (*r)->payload_as_JobSubmit();
    REQUIRE(j != nullptr);
    CHECK(str(j->job_id()) == "job-1");
    CHECK(span_of(j->payload()).size() == 100);
  }
}

TEST_CASE("random bytes are refused with a reason") {
  std::mt19937 rng(1);
  for (int i = 0; i < 2000; ++i) {
    bytes b(rng() % 300);
    for (auto& x : b) x = static_cast<std::uint8_t>(rng());
    if (b.size() >= 8) std::copy_n("CRCB", 4, b.begin() + 4);  // pass the identifier check
    auto r = open(b);
    if (!r.ok()) CHECK(r.error().code == errc::corrupt);
  }
}

TEST_CASE("an oversized buffer is refused before it is parsed") {
  bytes b = heartbeat(1);
  auto r = open(b, b.size() - 1);
  REQUIRE(!r.ok());
  CHECK(r.error().message.find("exceeds the limit") != std::string::npos);
}

TEST_CASE("a buffer without the crucible identifier is refused") {
  bytes b = heartbeat(1);
  b[4] = 'X';
  auto r = open(b);
  REQUIRE(!r.ok());
  CHECK(r.error().message.find("identifier") != std::string::npos);
}

TEST_CASE("kind names match the schema's union names") {
  CHECK(kind_name(msg::Payload::Settlement) == "Settlement");
  CHECK(kind_name(msg::Payload::RolloutGroup) == "RolloutGroup");
}
