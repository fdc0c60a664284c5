#include "runtime/bus/endpoints.hpp"

#include <charconv>

namespace crucible::bus {

result<hub_endpoints> derive_endpoints(const std::string& address) {
  auto bad = [&](const std::string& why) {
    return make_error(errc::invalid_argument, "bus address '" + address + "': " + why);
  };
  if (address.rfind("tcp://", 0) == 0) {
    auto colon = address.rfind(':');
    if (colon == std::string::npos || colon < 6) return bad("expected tcp://HOST:PORT");
    std::string host = address.substr(0, colon);
    std::string port_text = address.substr(colon + 1);
    int port = 0;
    auto [p, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
    if (ec != std::errc() || p != port_text.data() + port_text.size() || port <= 0 || port > 65533)
      return bad("port '" + port_text + "' is not a number from 1 to 65533 (the hub also uses PORT+1 and PORT+2)");
    return hub_endpoints{address, host + ":" + std::to_string(port + 1), host + ":" + std::to_string(port + 2)};
  }
  if (address.rfind("ipc://", 0) == 0 || address.rfind("inproc://", 0) == 0) {
    if (address.back() == '/') return bad("expected a path or a name after the scheme");
    return hub_endpoints{address, address + ".events-in", address + ".events-out"};
  }
  return bad("the scheme must be tcp://, ipc:// or inproc://");
}

std::string connectable(const std::string& bind_address) {
  const std::string any = "tcp://*:";
  if (bind_address.rfind(any, 0) == 0) return "tcp://127.0.0.1:" + bind_address.substr(any.size());
  const std::string zero = "tcp://0.0.0.0:";
  if (bind_address.rfind(zero, 0) == 0) return "tcp://127.0.0.1:" + bind_address.substr(zero.size());
  return bind_address;
}

}  // namespace crucible::bus
