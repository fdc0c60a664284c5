// The hub's allow list, enforced where ZeroMQ asks: a ZAP handler (RFC 27)
// on inproc://zeromq.zap.01 of the process's context, answering each CURVE
// handshake on the hub's sockets with 200 when the client's public key is
// listed for the socket's ZAP domain and 400 otherwise, so that a peer
// without a listed key never gets a connection (it cannot register, submit,
// receive jobs or read events). A key not listed sends it to the folder's
// authorized_keys again when that file changed since it was read, so that
// peers listed while the hub runs join without a restart. Bound before any
// CURVE socket of the process, so no handshake is ever let through unasked.
// Used by zmq_transport.cpp only (it includes zmq.hpp).
#pragma once

#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include <zmq.hpp>

namespace crucible::bus {

class zap_authenticator {
 public:
  // The process's handler on ctx, started (and bound) on first use.
  static zap_authenticator& in(zmq::context_t& ctx);

  // A fresh domain whose allow list is keys (32-byte binary public keys),
  // as read from the key folder dir (load_hub_keys).
  std::string add_domain(const std::string& dir, std::set<std::string> keys);
  void remove_domain(const std::string& domain);

  ~zap_authenticator();
  zap_authenticator(const zap_authenticator&) = delete;
  zap_authenticator& operator=(const zap_authenticator&) = delete;

 private:
  explicit zap_authenticator(zmq::context_t& ctx);
  void serve();
  bool allowed(const std::string& domain, const std::string& key);

  zmq::socket_t socket_;
  std::mutex mutex_;
  struct domain {
    std::string dir;
    std::set<std::string> keys;
    std::filesystem::file_time_type read_at;  // authorized_keys' time when keys were read
  };
  std::map<std::string, domain> domains_;
  std::set<std::string> refused_seen_;  // logged once each
  int next_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace crucible::bus
