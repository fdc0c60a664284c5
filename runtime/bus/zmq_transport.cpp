#include "runtime/bus/zmq_transport.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <zmq.hpp>

#include "runtime/bus/batch.hpp"
#include "runtime/bus/curve_keys.hpp"
#include "runtime/bus/endpoints.hpp"
#include "runtime/bus/zap_authenticator.hpp"

namespace crucible::bus {

namespace {

// One context per process, so inproc endpoints of different transports meet.
zmq::context_t& process_context() {
  static zmq::context_t ctx(1);
  return ctx;
}

// An eventfd that wake() writes and receive() polls and drains.
class wake_fd {
 public:
  wake_fd() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {}
  ~wake_fd() { if (fd_ >= 0) ::close(fd_); }
  wake_fd(const wake_fd&) = delete;
  wake_fd& operator=(const wake_fd&) = delete;
  int fd() const { return fd_; }
  void signal() {
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(fd_, &one, sizeof one);
  }
  void drain() {
    std::uint64_t v;
    [[maybe_unused]] auto n = ::read(fd_, &v, sizeof v);
  }

 private:
  int fd_;
};

void set_common(zmq::socket_t& s, const zmq_options& o) {
  s.set(zmq::sockopt::sndhwm, o.send_high_water);
  s.set(zmq::sockopt::rcvhwm, o.receive_high_water);
  s.set(zmq::sockopt::linger, o.linger_ms);
}

// A hub socket as a CURVE server whose handshakes the ZAP domain decides.
void curve_server(zmq::socket_t& s, const curve_keys& k, const std::string& domain) {
  s.set(zmq::sockopt::curve_server, 1);
  s.set(zmq::sockopt::curve_secretkey, k.secret_key);  // 40 Z85 characters, as libzmq 4.3 takes them
  s.set(zmq::sockopt::zap_domain, domain);
}

// A peer socket as a CURVE client of the hub's public key.
void curve_client(zmq::socket_t& s, const curve_keys& k) {
  s.set(zmq::sockopt::curve_serverkey, k.server_key);
  s.set(zmq::sockopt::curve_publickey, k.public_key);
  s.set(zmq::sockopt::curve_secretkey, k.secret_key);
}

// Reads every part of one message; returns them all.
std::vector<zmq::message_t> recv_parts(zmq::socket_t& s) {
  std::vector<zmq::message_t> parts;
  while (true) {
    zmq::message_t m;
    if (!s.recv(m, zmq::recv_flags::dontwait)) break;
    bool more = m.more();
    parts.push_back(std::move(m));
    if (!more) break;
  }
  return parts;
}

std::span<const std::uint8_t> view(const zmq::message_t& m) {
  return {static_cast<const std::uint8_t*>(m.data()), m.size()};
}

bytes to_bytes(const zmq::message_t& m) {
  auto v = view(m);
  return bytes(v.begin(), v.end());
}

// A message that owns data's buffer: ZeroMQ frees it when sent, no copy.
zmq::message_t adopt(bytes data) {
  if (data.empty()) return zmq::message_t();
  auto* held = new bytes(std::move(data));
  return zmq::message_t(held->data(), held->size(), [](void*, void* hint) { delete static_cast<bytes*>(hint); }, held);
}

// Appends the direct message m from peer as frames: one, or one per message
// of a batch (batch.hpp). A malformed batch goes on whole, for the verifier.
void push_direct(std::vector<frame>& out, const std::string& peer, const zmq::message_t& m) {
  auto parts = split_batch(view(m));
  if (parts.empty()) parts.push_back(view(m));
  for (auto p : parts) {
    frame f;
    f.peer = peer;
    f.data.assign(p.begin(), p.end());
    out.push_back(std::move(f));
  }
}

status send_error(const std::string& what, const zmq::error_t& e) {
  errc code = (e.num() == EAGAIN || e.num() == EHOSTUNREACH) ? errc::unavailable : errc::io;
  return make_error(code, what + ": " + e.what());
}

// What the hub's and a peer's ends share: waking, the poll-and-drain loop of
// receive(), and publishing and reading events ([topic][data] messages).
class zmq_endpoint : public transport {
 public:
  status receive(std::vector<frame>& out, std::size_t max, std::chrono::milliseconds timeout) final {
    std::size_t start = out.size();
    try {
      drain(out, start, max);
      if (out.size() > start) return {};
      auto items = poll_items();
      items.push_back({nullptr, wake_.fd(), ZMQ_POLLIN, 0});
      zmq::poll(items.data(), items.size(), timeout);
      if (items.back().revents & ZMQ_POLLIN) wake_.drain();
      drain(out, start, max);
    } catch (const zmq::error_t& e) {
      if (e.num() == EINTR) return {};
      return make_error(errc::io, "receive on " + describe() + ": " + e.what());
    }
    return {};
  }

  void wake() final { wake_.signal(); }

  // Two or more messages go as one batch (batch.hpp).
  status send_batch(std::string_view peer, std::span<const std::span<const std::uint8_t>> messages) final {
    if (messages.size() == 1) return send(peer, messages[0]);
    return send_owned(peer, join_batch(messages));
  }

 protected:
  // The sockets to poll (the wake fd is added by receive()).
  virtual std::vector<zmq::pollitem_t> poll_items() = 0;
  // Reads at most one message from each socket; false when none had one.
  virtual bool drain_once(std::vector<frame>& out) = 0;

  static status publish_on(zmq::socket_t& s, std::string_view topic, std::span<const std::uint8_t> data) {
    try {
      s.send(zmq::buffer(topic.data(), topic.size()), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
      s.send(zmq::buffer(data.data(), data.size()), zmq::send_flags::dontwait);
    } catch (const zmq::error_t& e) {
      return send_error("publish on '" + std::string(topic) + "'", e);
    }
    return {};
  }

  // One event from s, if there is one. A malformed one arrives empty, for
  // the verifier to refuse and count.
  static bool read_event(zmq::socket_t& s, std::vector<frame>& out) {
    auto ev = recv_parts(s);
    if (ev.empty()) return false;
    frame f;
    f.via = channel::event;
    if (ev.size() == 2) {
      f.topic.assign(static_cast<const char*>(ev[0].data()), ev[0].size());
      f.data = to_bytes(ev[1]);
    }
    out.push_back(std::move(f));
    return true;
  }

 private:
  void drain(std::vector<frame>& out, std::size_t start, std::size_t max) {
    while (out.size() - start < max && drain_once(out)) {
    }
  }

  wake_fd wake_;
};

class zmq_hub_transport final : public zmq_endpoint {
 public:
  zmq_hub_transport(hub_endpoints ep, const zmq_options& o)
      : ep_(std::move(ep)),
        router_(process_context(), zmq::socket_type::router),
        xsub_(process_context(), zmq::socket_type::xsub),
        xpub_(process_context(), zmq::socket_type::xpub) {
    for (auto* s : {&router_, &xsub_, &xpub_}) set_common(*s, o);
    router_.set(zmq::sockopt::router_mandatory, 1);
    // A restarted peer reconnects under the same name: let it take over.
    router_.set(zmq::sockopt::router_handover, 1);
  }

  ~zmq_hub_transport() override {
    if (!domain_.empty()) zap_authenticator::in(process_context()).remove_domain(domain_);
  }

  // CURVE on the three sockets, the allow list enforced by the ZAP handler.
  void secure(const std::string& dir, const hub_keys& keys) {
    domain_ = zap_authenticator::in(process_context()).add_domain(dir, keys.allowed);
    for (auto* s : {&router_, &xsub_, &xpub_}) curve_server(*s, keys.own, domain_);
  }

  status bind() {
    try {
      router_.bind(ep_.direct);
      xsub_.bind(ep_.events_in);
      xpub_.bind(ep_.events_out);
      // Ask every publisher for every topic; XPUB filters per subscriber.
      std::uint8_t all = 1;
      xsub_.send(zmq::buffer(&all, 1), zmq::send_flags::none);
    } catch (const zmq::error_t& e) {
      return make_error(errc::io, "cannot bind hub at " + ep_.direct + " (+ events " + ep_.events_in +
                                      ", " + ep_.events_out + "): " + e.what());
    }
    return {};
  }

  status send(std::string_view peer, std::span<const std::uint8_t> data) override {
    try {
      if (!router_.send(zmq::buffer(peer.data(), peer.size()), zmq::send_flags::sndmore | zmq::send_flags::dontwait))
        return make_error(errc::unavailable, "send queue to '" + std::string(peer) + "' is full");
      router_.send(zmq::buffer(data.data(), data.size()), zmq::send_flags::dontwait);
    } catch (const zmq::error_t& e) {
      return send_error("send to '" + std::string(peer) + "'", e);
    }
    return {};
  }

  status send_owned(std::string_view peer, bytes data) override {
    try {
      if (!router_.send(zmq::buffer(peer.data(), peer.size()), zmq::send_flags::sndmore | zmq::send_flags::dontwait))
        return make_error(errc::unavailable, "send queue to '" + std::string(peer) + "' is full");
      router_.send(adopt(std::move(data)), zmq::send_flags::dontwait);
    } catch (const zmq::error_t& e) {
      return send_error("send to '" + std::string(peer) + "'", e);
    }
    return {};
  }

  status publish(std::string_view topic, std::span<const std::uint8_t> data) override {
    return publish_on(xpub_, topic, data);
  }

  // The hub receives every published event (its XSUB asks for all of them).
  status subscribe(std::string_view) override { return {}; }

  std::string describe() const override { return "zmq hub " + ep_.direct + (domain_.empty() ? "" : " (CURVE)"); }

 private:
  std::vector<zmq::pollitem_t> poll_items() override {
    return {{router_.handle(), 0, ZMQ_POLLIN, 0}, {xsub_.handle(), 0, ZMQ_POLLIN, 0}, {xpub_.handle(), 0, ZMQ_POLLIN, 0}};
  }

  bool drain_once(std::vector<frame>& out) override {
    bool progress = false;
    auto parts = recv_parts(router_);
    if (!parts.empty()) {
      progress = true;
      std::string peer(static_cast<const char*>(parts[0].data()), parts[0].size());
      // A well-formed DEALER message is [id][data]; anything else arrives
      // as an empty frame, which the verifier refuses and counts.
      if (parts.size() == 2) {
        push_direct(out, peer, parts[1]);
      } else {
        frame f;
        f.peer = std::move(peer);
        out.push_back(std::move(f));
      }
    }
    if (read_event(xsub_, out)) progress = true;
    // Subscription notices: XPUB already filters per subscriber.
    if (!recv_parts(xpub_).empty()) progress = true;
    return progress;
  }

  hub_endpoints ep_;
  zmq::socket_t router_, xsub_, xpub_;
  std::string domain_;  // the ZAP domain of its allow list; empty without CURVE
};

class zmq_peer_transport final : public zmq_endpoint {
 public:
  zmq_peer_transport(hub_endpoints ep, std::string name, const zmq_options& o)
      : ep_(std::move(ep)),
        name_(std::move(name)),
        dealer_(process_context(), zmq::socket_type::dealer),
        pub_(process_context(), zmq::socket_type::pub),
        sub_(process_context(), zmq::socket_type::sub) {
    for (auto* s : {&dealer_, &pub_, &sub_}) set_common(*s, o);
    dealer_.set(zmq::sockopt::routing_id, name_);
  }

  void secure(const curve_keys& keys) {
    for (auto* s : {&dealer_, &pub_, &sub_}) curve_client(*s, keys);
    curve_ = true;
  }

  status connect() {
    try {
      dealer_.connect(ep_.direct);
      pub_.connect(ep_.events_in);
      sub_.connect(ep_.events_out);
    } catch (const zmq::error_t& e) {
      return make_error(errc::io, "cannot connect to hub at " + ep_.direct + ": " + e.what());
    }
    return {};
  }

  status send(std::string_view, std::span<const std::uint8_t> data) override {
    try {
      if (!dealer_.send(zmq::buffer(data.data(), data.size()), zmq::send_flags::dontwait))
        return make_error(errc::unavailable, "send queue to the hub is full (is the hub up?)");
    } catch (const zmq::error_t& e) {
      return send_error("send to hub", e);
    }
    return {};
  }

  status send_owned(std::string_view, bytes data) override {
    try {
      if (!dealer_.send(adopt(std::move(data)), zmq::send_flags::dontwait))
        return make_error(errc::unavailable, "send queue to the hub is full (is the hub up?)");
    } catch (const zmq::error_t& e) {
      return send_error("send to hub", e);
    }
    return {};
  }

  status publish(std::string_view topic, std::span<const std::uint8_t> data) override {
    return publish_on(pub_, topic, data);
  }

  status subscribe(std::string_view prefix) override {
    try {
      sub_.set(zmq::sockopt::subscribe, std::string(prefix));
    } catch (const zmq::error_t& e) {
      return make_error(errc::io, std::string("subscribe: ") + e.what());
    }
    return {};
  }

  std::string describe() const override {
    return "zmq peer " + name_ + " -> " + ep_.direct + (curve_ ? " (CURVE)" : "");
  }

 private:
  std::vector<zmq::pollitem_t> poll_items() override {
    return {{dealer_.handle(), 0, ZMQ_POLLIN, 0}, {sub_.handle(), 0, ZMQ_POLLIN, 0}};
  }

  bool drain_once(std::vector<frame>& out) override {
    bool progress = false;
    auto parts = recv_parts(dealer_);
    if (!parts.empty()) {
      progress = true;
      if (parts.size() == 1) push_direct(out, {}, parts[0]);
      else out.push_back(frame{});
    }
    if (read_event(sub_, out)) progress = true;
    return progress;
  }

  hub_endpoints ep_;
  std::string name_;
  zmq::socket_t dealer_, pub_, sub_;
  bool curve_ = false;
};

}  // namespace

result<std::unique_ptr<transport>> bind_hub_transport(const std::string& address, const zmq_options& o) {
  auto ep = derive_endpoints(address);
  if (!ep) return ep.error();
  auto t = std::make_unique<zmq_hub_transport>(*ep, o);
  if (!o.keys.empty()) {
    auto keys = load_hub_keys(o.keys);
    if (!keys) return keys.error();
    t->secure(o.keys, *keys);
  }
  CRUCIBLE_TRY(t->bind());
  return std::unique_ptr<transport>(std::move(t));
}

result<std::unique_ptr<transport>> connect_peer_transport(const std::string& address, const std::string& name,
                                                          const zmq_options& o) {
  auto ep = derive_endpoints(address);
  if (!ep) return ep.error();
  if (name.empty()) return make_error(errc::invalid_argument, "a peer needs a non-empty name");
  auto t = std::make_unique<zmq_peer_transport>(*ep, name, o);
  if (!o.keys.empty()) {
    auto keys = load_peer_keys(o.keys);
    if (!keys) return keys.error();
    t->secure(*keys);
  }
  CRUCIBLE_TRY(t->connect());
  return std::unique_ptr<transport>(std::move(t));
}

}  // namespace crucible::bus
