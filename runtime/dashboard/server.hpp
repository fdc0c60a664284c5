// The dashboard's HTTP server: the page at / and the board's JSON at
// /api/fleet, /api/queues, /api/settlements, /api/throughput, /api/rewards
// and /api/exemplars (docs/dashboard.md), on a thread pool of its own
// (metrics::http_listener). `crucible hub --dashboard HOST:PORT`,
// `crucible run --dashboard HOST:PORT` and [dashboard] listen open one,
// on the main thread before the actor system starts; it is closed after the
// actor system stops. The roles write into board().
#pragma once

#include <memory>
#include <string>

#include "runtime/base/result.hpp"
#include "runtime/dashboard/board.hpp"
#include "runtime/metrics/http_listener.hpp"

namespace crucible::dashboard {

// [dashboard] of a config.
struct dashboard_options {
  // HOST:PORT to serve the dashboard on (as [metrics] listen). Default: "",
  // no dashboard.
  std::string listen;
};

class server {
 public:
  // Listens on address; origin names the option in errors ("--dashboard",
  // "[dashboard] listen"): errc::invalid_argument for an address that is not
  // HOST:PORT, errc::io when nothing can listen there.
  static result<std::unique_ptr<server>> listen(const std::string& address, const std::string& origin);

  const std::shared_ptr<dashboard::board>& board() const { return board_; }
  int port() const { return http_->port(); }
  // http://HOST:PORT/, for logs.
  std::string url() const { return http_->base_url() + "/"; }

 private:
  server() = default;
  std::shared_ptr<dashboard::board> board_;
  std::unique_ptr<metrics::http_listener> http_;
};

}  // namespace crucible::dashboard
