#include "runtime/dashboard/server.hpp"

#include <httplib.h>

#include "runtime/dashboard/page.hpp"

namespace crucible::dashboard {

namespace {

constexpr std::size_t settlements_shown = 50;

void serve_json(httplib::Response& res, const nlohmann::json& j) {
  res.set_header("Cache-Control", "no-store");
  res.set_content(json_text(j), "application/json");
}

}  // namespace

result<std::unique_ptr<server>> server::listen(const std::string& address, const std::string& origin) {
  std::unique_ptr<server> s(new server());
  s->board_ = std::make_shared<dashboard::board>();
  auto routes = [b = s->board_](httplib::Server& http) {
    http.set_keep_alive_timeout(1);  // a browser's idle connection frees its thread soon
    http.Get("/", [](const httplib::Request&, httplib::Response& res) {
      res.set_header("Cache-Control", "no-store");
      res.set_content(page_html(), "text/html; charset=utf-8");
    });
    http.Get("/api/fleet", [b](const httplib::Request&, httplib::Response& res) { serve_json(res, b->fleet()); });
    http.Get("/api/queues", [b](const httplib::Request&, httplib::Response& res) { serve_json(res, b->queues()); });
    http.Get("/api/settlements", [b](const httplib::Request&, httplib::Response& res) {
      serve_json(res, b->settlements(settlements_shown));
    });
    http.Get("/api/throughput",
             [b](const httplib::Request&, httplib::Response& res) { serve_json(res, b->throughput()); });
    http.Get("/api/rewards", [b](const httplib::Request&, httplib::Response& res) { serve_json(res, b->rewards()); });
    http.Get("/api/kernels", [b](const httplib::Request&, httplib::Response& res) { serve_json(res, b->kernels()); });
    http.Get("/api/exemplars",
             [b](const httplib::Request&, httplib::Response& res) { serve_json(res, b->exemplars()); });
  };
  // A browser opens several connections at once; one thread would serve
  // them one after the other.
  auto http = metrics::http_listener::listen(address, origin, routes, 4);
  if (!http) return http.error();
  s->http_ = std::move(*http);
  return s;
}

}  // namespace crucible::dashboard
