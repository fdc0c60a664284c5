// A process's Prometheus endpoint: GET /metrics answers with prometheus-cpp's
// text exposition (TextSerializer) of one registry that every role in the
// process registers its families on (docs/metrics.md lists them). The HTTP
// server is cpp-httplib on a thread of its own, not prometheus-cpp's
// Exposer: Debian's civetweb starts its threads with 100 KiB stacks, less
// than the static TLS of a process that loads LibTorch and OpenBLAS (about
// 107 KiB), so the Exposer cannot start a thread in `crucible`
// (../shared/deps.md). `crucible ROLE --metrics HOST:PORT` and
// `[metrics] listen` open one; `crucible run` opens one for all its roles.
// Opened on the main thread before the actor system starts, closed after it
// stops.
#pragma once

#include <memory>
#include <string>

#include "runtime/base/result.hpp"
#include "runtime/metrics/http_listener.hpp"
#include "runtime/metrics/registry.hpp"

namespace crucible::metrics {

// [metrics] of a config.
struct metrics_options {
  // HOST:PORT to serve /metrics on (HOST: an IPv4 address, a name that
  // resolves to one, or "*" for every interface). Default: "", no endpoint.
  std::string listen;
};

class endpoint {
 public:
  // Listens on address. origin names where the address came from
  // ("--metrics", "[metrics] listen") in errors: errc::invalid_argument for
  // an address that is not HOST:PORT, errc::io when nothing can listen there
  // (the port is in use, the address is not this machine's).
  static result<std::unique_ptr<endpoint>> listen(const std::string& address, const std::string& origin);

  const registry_ptr& registry() const { return registry_; }
  // The port it listens on (the one asked for, or the kernel's pick for 0).
  int port() const { return http_->port(); }
  // http://HOST:PORT/metrics, for logs.
  const std::string& url() const { return url_; }

 private:
  endpoint() = default;
  registry_ptr registry_;
  std::unique_ptr<http_listener> http_;
  std::string url_;
};

}  // namespace crucible::metrics
