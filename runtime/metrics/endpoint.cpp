#include "runtime/metrics/endpoint.hpp"

#include <httplib.h>
#include <prometheus/registry.h>
#include <prometheus/text_serializer.h>

namespace crucible::metrics {

result<std::unique_ptr<endpoint>> endpoint::listen(const std::string& address, const std::string& origin) {
  std::unique_ptr<endpoint> e(new endpoint());
  e->registry_ = std::make_shared<prometheus::Registry>();
  // One thread answers scrapes, one at a time.
  auto http = http_listener::listen(address, origin, [registry = e->registry_](httplib::Server& server) {
    server.Get("/metrics", [registry](const httplib::Request&, httplib::Response& res) {
      res.set_content(prometheus::TextSerializer().Serialize(registry->Collect()), "text/plain; version=0.0.4");
    });
  });
  if (!http) return http.error();
  e->http_ = std::move(*http);
  e->url_ = e->http_->base_url() + "/metrics";
  return e;
}

}  // namespace crucible::metrics
