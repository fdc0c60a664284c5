#include "actors/referee/referee_host.hpp"

#include "runtime/bus/zmq_transport.hpp"

namespace crucible::referee {

result<referee_service> start_referee(caf::actor_system& sys, const referee_options& options,
                                      std::shared_ptr<storage::kv_store> kv, bus::peer_options peer,
                                      const std::string& address, metrics::registry_ptr metrics) {
  auto worker = bus::connect_peer_transport(address, peer.name, {.keys = peer.keys});
  if (!worker) return worker.error();
  auto client = bus::connect_peer_transport(address, peer.name + ".client", {.keys = peer.keys});
  if (!client) return client.error();
  referee_links links{std::move(peer), std::shared_ptr<bus::transport>(std::move(*worker)),
                      std::shared_ptr<bus::transport>(std::move(*client)), std::move(metrics)};
  return spawn_referee(sys, options, std::move(kv), std::move(links));
}

std::string local_address(const std::string& bind) {
  for (std::string any : {"tcp://*:", "tcp://0.0.0.0:"})
    if (bind.rfind(any, 0) == 0) return "tcp://127.0.0.1:" + bind.substr(any.size());
  return bind;
}

}  // namespace crucible::referee
