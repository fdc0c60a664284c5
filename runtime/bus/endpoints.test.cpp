#include <doctest/doctest.h>

#include "runtime/bus/endpoints.hpp"

using namespace crucible;
using namespace crucible::bus;

TEST_CASE("a tcp address gives direct, events-in and events-out on consecutive ports") {
  auto ep = derive_endpoints("tcp://127.0.0.1:7000");
  REQUIRE(ep.ok());
  CHECK(ep->direct == "tcp://127.0.0.1:7000");
  CHECK(ep->events_in == "tcp://127.0.0.1:7001");
  CHECK(ep->events_out == "tcp://127.0.0.1:7002");
}

TEST_CASE("ipc and inproc addresses get suffixed event endpoints") {
  auto ep = derive_endpoints("ipc:///tmp/x/hub");
  REQUIRE(ep.ok());
  CHECK(ep->events_in == "ipc:///tmp/x/hub.events-in");
}

TEST_CASE("a bad address is an error that names it") {
  for (const char* bad : {"tcp://host", "tcp://host:notaport", "tcp://host:65535", "http://x:1", "ipc://"}) {
    auto ep = derive_endpoints(bad);
    REQUIRE_FALSE(ep.ok());
    CHECK(ep.error().message.find(bad) != std::string::npos);
  }
}

TEST_CASE("a wildcard bind address becomes a loopback address to connect to") {
  CHECK(connectable("tcp://*:5555") == "tcp://127.0.0.1:5555");
  CHECK(connectable("ipc:///a") == "ipc:///a");
}
