#include <doctest/doctest.h>

#include <string>

#include "runtime/bus/batch.hpp"
#include "runtime/bus/outbox.hpp"
#include "runtime/bus/zmq_transport.hpp"

using namespace crucible;
using namespace crucible::bus;

namespace {

bytes text(const std::string& s) { return bytes(s.begin(), s.end()); }
std::string text(std::span<const std::uint8_t> b) { return std::string(b.begin(), b.end()); }

// Records what transmit() hands to a transport.
struct recording_transport final : transport {
  std::vector<std::pair<std::string, std::vector<std::string>>> batches;
  std::vector<std::string> events;
  status send(std::string_view peer, std::span<const std::uint8_t> m) override {
    batches.emplace_back(std::string(peer), std::vector<std::string>{text(m)});
    return {};
  }
  status send_batch(std::string_view peer, std::span<const std::span<const std::uint8_t>> m) override {
    std::vector<std::string> v;
    for (auto x : m) v.push_back(text(x));
    batches.emplace_back(std::string(peer), std::move(v));
    return {};
  }
  status publish(std::string_view topic, std::span<const std::uint8_t>) override {
    events.emplace_back(topic);
    return {};
  }
  status subscribe(std::string_view) override { return {}; }
  status receive(std::vector<frame>&, std::size_t, std::chrono::milliseconds) override { return {}; }
  void wake() override {}
  std::string describe() const override { return "recording"; }
};

}  // namespace

TEST_CASE("a batch splits back into its messages, in order, empty and odd sizes included") {
  std::vector<bytes> msgs = {text("a"), text(""), text("0123456789"), bytes(1000, 7)};
  std::vector<std::span<const std::uint8_t>> views(msgs.begin(), msgs.end());
  auto joined = join_batch(views);
  CHECK(is_batch(joined));
  CHECK(joined.size() % 8 == 0);
  auto parts = split_batch(joined);
  REQUIRE(parts.size() == msgs.size());
  for (std::size_t i = 0; i < msgs.size(); ++i) CHECK(bytes(parts[i].begin(), parts[i].end()) == msgs[i]);
}

TEST_CASE("a truncated batch, a length past the end, or no header splits into nothing") {
  std::vector<bytes> msgs = {text("hello"), text("world!")};
  std::vector<std::span<const std::uint8_t>> views(msgs.begin(), msgs.end());
  auto joined = join_batch(views);
  CHECK(split_batch(std::span(joined).first(joined.size() - 9)).empty());
  auto bad = joined;
  bad[8] = 0xff;  // first length: far past the end
  CHECK(split_batch(bad).empty());
  CHECK(split_batch(text("CRCBCRCB plain message")).empty());
  CHECK_FALSE(is_batch(text("short")));
}

TEST_CASE("transmit groups direct messages per peer in order, sends large ones alone, publishes events, splits long groups") {
  recording_transport t;
  outbox out;
  out.push_back({channel::direct, "w1", text("1")});
  out.push_back({channel::direct, "w2", text("2")});
  out.push_back({channel::event, "PeerEvent", text("e")});
  out.push_back({channel::direct, "w1", text("3")});
  for (std::size_t i = 0; i < batch_max_messages + 1; ++i) out.push_back({channel::direct, "w3", text("x")});
  out.push_back({channel::direct, "w1", text("4")});
  out.push_back({channel::direct, "w1", bytes(batch_alone_bytes, 'L')});
  out.push_back({channel::direct, "w1", text("5")});
  CHECK(transmit(t, out) == 0);
  REQUIRE(t.batches.size() == 6);
  using sent = std::pair<std::string, std::vector<std::string>>;
  CHECK(t.batches[0] == sent{"w1", {"1", "3", "4"}});
  CHECK(t.batches[1].second.front().size() == batch_alone_bytes);  // alone, after the run before it
  CHECK(t.batches[2] == sent{"w1", {"5"}});
  CHECK(t.batches[3] == sent{"w2", {"2"}});
  CHECK(t.batches[4].second.size() == batch_max_messages);
  CHECK(t.batches[5].second.size() == 1);
  CHECK(t.events == std::vector<std::string>{"PeerEvent"});
}

TEST_CASE("zmq: a batch sent either way arrives as separate frames, a malformed one arrives whole") {
  auto hub = bind_hub_transport("inproc://batch-test");
  REQUIRE(hub.ok());
  auto peer = connect_peer_transport("inproc://batch-test", "p1");
  REQUIRE(peer.ok());
  auto collect = [](transport& t, std::size_t n) {
    std::vector<frame> got;
    for (int i = 0; i < 100 && got.size() < n; ++i) (void)t.receive(got, 64, std::chrono::milliseconds(20));
    return got;
  };
  std::vector<bytes> msgs = {text("one"), text("two"), text("three")};
  std::vector<std::span<const std::uint8_t>> views(msgs.begin(), msgs.end());
  REQUIRE((*peer)->send_batch("", views).ok());
  auto at_hub = collect(**hub, 3);
  REQUIRE(at_hub.size() == 3);
  CHECK(text(at_hub[2].data) == "three");
  CHECK(at_hub[0].peer == "p1");

  REQUIRE((*hub)->send_batch("p1", views).ok());
  auto at_peer = collect(**peer, 3);
  REQUIRE(at_peer.size() == 3);
  CHECK(text(at_peer[1].data) == "two");

  auto bad = join_batch(views);
  bad.resize(bad.size() - 5);
  REQUIRE((*peer)->send("", bad).ok());
  auto whole = collect(**hub, 1);
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].data == bad);
}
