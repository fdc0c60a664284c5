// What the hub actor writes into the dashboard's board from the events it
// forwards.
#include <doctest/doctest.h>

#include "messages/codec.hpp"
#include "runtime/node/hub_board.hpp"

using namespace crucible;

namespace {

bus::frame event(const std::string& topic, bus::bytes data) {
  return {bus::channel::event, "", topic, std::move(data)};
}

bus::bytes buckets_of(const std::string& task, const std::vector<dashboard::bucket_row>& buckets) {
  messages::envelope_writer w;
  auto& fbb = w.fbb();
  std::vector<flatbuffers::Offset<msg::ExemplarBucket>> items;
  for (const auto& b : buckets)
    items.push_back(msg::CreateExemplarBucket(fbb, b.bucket, b.low, b.high, b.count, b.mean, b.probability));
  auto payload = msg::CreateExemplarBuckets(fbb, fbb.CreateString(task), fbb.CreateVector(items),
                                            fbb.CreateString("bucket"), 1.0, 0.1, fbb.CreateString("linear"));
  return w.finish(payload, "exemplar-7", task);
}

}  // namespace

TEST_CASE("an ExemplarBuckets event the hub forwards goes onto the board, naming the store that published it") {
  const auto now = dashboard::clock::now();
  dashboard::board b({}, now);
  node::show_event(event("ExemplarBuckets", buckets_of("cpu/gelu", {{12, 1.2, 1.3, 1.25, 2, 0.25},
                                                                    {20, 2.0, 2.1, 2.05, 1, 0.75}})),
                   b, 1 << 20, now);
  auto ex = b.exemplars();
  CAPTURE(ex.dump());
  REQUIRE(ex["tasks"].size() == 1);
  CHECK(ex["tasks"][0]["task"] == "cpu/gelu");
  CHECK(ex["tasks"][0]["store"] == "exemplar-7");
  CHECK(ex["tasks"][0]["scale"] == "linear");
  CHECK(ex["tasks"][0]["bucket_width"].get<double>() == 0.1);
  REQUIRE(ex["tasks"][0]["buckets"].size() == 2);
  CHECK(ex["tasks"][0]["buckets"][0]["count"] == 2);
  CHECK(ex["tasks"][0]["buckets"][1]["probability"].get<double>() == 0.75);
}

TEST_CASE("a malformed or mislabelled event changes nothing on the board") {
  const auto now = dashboard::clock::now();
  dashboard::board b({}, now);
  node::show_event(event("ExemplarBuckets", {1, 2, 3, 4}), b, 1 << 20, now);
  auto data = buckets_of("cpu/gelu", {{12, 1.2, 1.3, 1.25, 1, 1.0}});
  node::show_event(event("ExemplarBuckets", data), b, 16, now);  // over the size limit
  node::show_event({bus::channel::direct, "exemplar-7", "", data}, b, 1 << 20, now);
  node::show_event(event("PeerEvent", data), b, 1 << 20, now);
  CHECK(b.exemplars()["tasks"].empty());
}
