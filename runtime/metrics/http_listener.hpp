// An HTTP server (cpp-httplib) on a thread of its own at HOST:PORT, for the
// process's read-only pages: /metrics (endpoint.hpp) and the dashboard
// (runtime/dashboard/server.hpp). cpp-httplib, not prometheus-cpp's
// civetweb: civetweb cannot start threads in a process that loads LibTorch
// (../shared/deps.md, gotcha 10). Opened on the main thread; the routes run
// on the server's threads, so what they read must be thread-safe. The
// destructor stops the server and joins its thread.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "runtime/base/result.hpp"

namespace httplib {
class Server;
}  // namespace httplib

namespace crucible::metrics {

class http_listener {
 public:
  // Listens on address (HOST:PORT; HOST an IPv4 address, a name that
  // resolves to one, or "*" for every interface; PORT 0: the kernel picks)
  // after routes(server) has added its handlers; `threads` answer requests.
  // origin names where the address came from ("--metrics", "[dashboard]
  // listen") in errors: errc::invalid_argument for an address that is not
  // HOST:PORT, errc::io when nothing can listen there.
  static result<std::unique_ptr<http_listener>> listen(const std::string& address, const std::string& origin,
                                                       const std::function<void(httplib::Server&)>& routes,
                                                       int threads = 1);
  ~http_listener();

  // The port it listens on (the one asked for, or the kernel's pick for 0).
  int port() const { return port_; }
  // http://HOST:PORT (0.0.0.0 for "*"), for logs.
  const std::string& base_url() const { return base_url_; }

 private:
  http_listener() = default;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;  // runs server_
  int port_ = 0;
  std::string base_url_;
};

}  // namespace crucible::metrics
