#include "runtime/metrics/http_listener.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <charconv>
#include <chrono>

#include <httplib.h>

namespace crucible::metrics {

namespace {

error bad_address(const std::string& origin, const std::string& address, const std::string& why) {
  return make_error(errc::invalid_argument,
                    origin + " '" + address + "': " + why + " (expected HOST:PORT, e.g. 127.0.0.1:9464 or *:9464)");
}

// HOST as a dotted IPv4 address ("*": every interface).
result<std::string> numeric_host(const std::string& host) {
  if (host == "*") return std::string("0.0.0.0");
  in_addr a{};
  if (::inet_pton(AF_INET, host.c_str(), &a) == 1) return host;
  addrinfo hints{};
  hints.ai_family = AF_INET;
  addrinfo* found = nullptr;
  if (::getaddrinfo(host.c_str(), nullptr, &hints, &found) != 0 || !found)
    return make_error(errc::invalid_argument, "host '" + host + "' does not resolve to an IPv4 address");
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(found->ai_addr)->sin_addr, text, sizeof text);
  ::freeaddrinfo(found);
  return std::string(text);
}

}  // namespace

result<std::unique_ptr<http_listener>> http_listener::listen(const std::string& address, const std::string& origin,
                                                             const std::function<void(httplib::Server&)>& routes,
                                                             int threads) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos) return bad_address(origin, address, "no port");
  if (colon == 0) return bad_address(origin, address, "no host");
  const std::string host = address.substr(0, colon), port_text = address.substr(colon + 1);
  int port = -1;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc{} || end != port_text.data() + port_text.size() || port < 0 ||
      port > 65535)
    return bad_address(origin, address, "port '" + port_text + "' is not a number from 0 to 65535");
  auto ip = numeric_host(host);
  if (!ip) return bad_address(origin, address, ip.error().message);

  std::unique_ptr<http_listener> l(new http_listener());
  l->server_ = std::make_unique<httplib::Server>();
  // SO_REUSEADDR only: httplib's default adds SO_REUSEPORT, with which a
  // second process would share a port in use instead of being refused.
  l->server_->set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  l->server_->new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<std::size_t>(threads)); };
  routes(*l->server_);
  const int bound = port == 0 ? l->server_->bind_to_any_port(*ip) : (l->server_->bind_to_port(*ip, port) ? port : -1);
  if (bound <= 0)
    return make_error(errc::io, origin + " '" + address + "': cannot listen there (is the port in use, or the " +
                                    "address not this machine's?)");
  l->port_ = bound;
  l->base_url_ = "http://" + (host == "*" ? std::string("0.0.0.0") : host) + ":" + std::to_string(bound);
  l->thread_ = std::thread([server = l->server_.get()] { server->listen_after_bind(); });
  // stop() does nothing to a server that is not running yet.
  while (!l->server_->is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return l;
}

http_listener::~http_listener() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace crucible::metrics
