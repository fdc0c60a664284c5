#include <doctest/doctest.h>

#include <algorithm>

#include "runtime/bus/memory_transport.hpp"

using namespace crucible::bus;
using namespace std::chrono_literals;

namespace {
std::vector<frame> drain(transport& t) {
  std::vector<frame> out;
  (void)t.receive(out, 1000, 0ms);
  return out;
}
bytes one(std::uint8_t v) { return bytes{v}; }
}  // namespace

TEST_CASE("without faults a message arrives once, after the delay, in order") {
  memory_network net({.min_delay = 5ms, .max_delay = 5ms});
  auto hub = net.hub_end();
  auto w = net.peer_end("w");
  (void)w->send("", one(1));
  (void)w->send("", one(2));
  CHECK(drain(*hub).empty());
  net.advance(5ms);
  auto got = drain(*hub);
  REQUIRE(got.size() == 2);
  CHECK(got[0].peer == "w");
  CHECK(got[0].data == one(1));
  CHECK(got[1].data == one(2));
}

TEST_CASE("injected faults drop, duplicate and reorder reproducibly from the seed") {
  auto run = [](std::uint64_t seed) {
    memory_network net({.drop = 0.2, .duplicate = 0.2, .min_delay = 0ms, .max_delay = 20ms, .seed = seed});
    auto hub = net.hub_end();
    auto w = net.peer_end("w");
    for (int i = 0; i < 200; ++i) (void)w->send("", one(static_cast<std::uint8_t>(i)));
    net.advance(20ms);
    std::vector<int> seen;
    for (auto& f : drain(*hub)) seen.push_back(f.data[0]);
    return std::make_tuple(seen, net.dropped(), net.duplicated());
  };
  auto [a, dropped, duplicated] = run(7);
  CHECK(dropped > 10);
  CHECK(duplicated > 10);
  CHECK(a.size() == 200 - dropped + duplicated);
  CHECK_FALSE(std::is_sorted(a.begin(), a.end()));
  CHECK(std::get<0>(run(7)) == a);
}

TEST_CASE("a cut peer neither sends nor receives until reconnected") {
  memory_network net;
  auto hub = net.hub_end();
  auto w = net.peer_end("w");
  net.cut("w");
  (void)w->send("", one(1));
  (void)hub->send("w", one(2));
  net.advance(1ms);
  CHECK(drain(*hub).empty());
  CHECK(drain(*w).empty());
  net.reconnect("w");
  (void)w->send("", one(3));
  net.advance(1ms);
  CHECK(drain(*hub).size() == 1);
}

TEST_CASE("events published by the hub reach subscribers of a prefix only") {
  memory_network net;
  auto hub = net.hub_end();
  auto a = net.peer_end("a");
  auto b = net.peer_end("b");
  (void)a->subscribe("Settle");
  (void)b->subscribe("Verdict");
  (void)hub->publish("Settlement", one(9));
  net.advance(1ms);
  auto got = drain(*a);
  REQUIRE(got.size() == 1);
  CHECK(got[0].via == channel::event);
  CHECK(got[0].topic == "Settlement");
  CHECK(drain(*b).empty());
}
