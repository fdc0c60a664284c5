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

TEST_CASE("a peer's task id that is not UTF-8 is shown with replacement characters, and every view still renders") {
  const auto now = dashboard::clock::now();
  dashboard::board b({}, now);
  const std::string bad = "cpu/\xff\xfe";
  node::show_event(event("ExemplarBuckets", buckets_of(bad, {{12, 1.2, 1.3, 1.25, 2, 1.0}})), b, 1 << 20, now);
  b.add_settlement({"c1", bad, "g1", "Success", "", 1.5, 1.5, false, 0, 0});
  CHECK_THROWS(b.exemplars().dump());  // what the server sent before: a 500 while the row stays
  for (const auto& view : {b.exemplars(), b.settlements(50), b.kernels(), b.rewards(), b.fleet(), b.queues()}) {
    std::string text;
    CHECK_NOTHROW(text = dashboard::json_text(view));
    CHECK_FALSE(nlohmann::json::parse(text, nullptr, false).is_discarded());
  }
  const auto text = dashboard::json_text(b.exemplars());
  CHECK(text.find("cpu/\xef\xbf\xbd\xef\xbf\xbd") != std::string::npos);
}
