#include "runtime/bus/zap_authenticator.hpp"

#include <spdlog/spdlog.h>

#include <vector>

#include "runtime/bus/curve_keys.hpp"

namespace crucible::bus {

namespace {
std::filesystem::file_time_type modified(const std::string& dir) {
  std::error_code ec;
  auto t = std::filesystem::last_write_time(std::filesystem::path(dir) / "authorized_keys", ec);
  return ec ? std::filesystem::file_time_type{} : t;
}

// f() again while it fails with EINTR (a signal delivered to this thread):
// a request or reply cut between its parts would leave the REP socket
// mid-message, and every later peer's authentication would fail with it.
template <class F>
auto on_through_signals(F f) {
  while (true) {
    try {
      return f();
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) throw;
    }
  }
}

std::string z85(const std::string& raw) {
  if (raw.size() != 32) return "(not a 32-byte key)";
  char text[41];
  zmq_z85_encode(text, reinterpret_cast<const std::uint8_t*>(raw.data()), raw.size());
  return text;
}
}  // namespace

zap_authenticator& zap_authenticator::in(zmq::context_t& ctx) {
  static zap_authenticator handler(ctx);
  return handler;
}

zap_authenticator::zap_authenticator(zmq::context_t& ctx) : socket_(ctx, zmq::socket_type::rep) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.bind("inproc://zeromq.zap.01");  // before any CURVE socket binds: nothing is let through unasked
  thread_ = std::thread([this] { serve(); });
}

zap_authenticator::~zap_authenticator() {
  stop_ = true;
  if (thread_.joinable()) thread_.join();
}

std::string zap_authenticator::add_domain(const std::string& dir, std::set<std::string> keys) {
  std::lock_guard lock(mutex_);
  auto name = "crucible-hub-" + std::to_string(next_++);
  domains_[name] = domain{dir, std::move(keys), modified(dir)};
  return name;
}

void zap_authenticator::remove_domain(const std::string& domain) {
  std::lock_guard lock(mutex_);
  domains_.erase(domain);
}

bool zap_authenticator::allowed(const std::string& name, const std::string& key) {
  std::lock_guard lock(mutex_);
  auto d = domains_.find(name);
  if (d == domains_.end()) return false;
  if (d->second.keys.count(key)) return true;
  auto now = modified(d->second.dir);
  if (now == d->second.read_at) return false;
  d->second.read_at = now;
  auto fresh = load_hub_keys(d->second.dir);
  if (!fresh) {
    spdlog::error("bus: the allow list changed but cannot be read, keeping the one before: {}", fresh.error().message);
    return false;
  }
  spdlog::info("bus: allow list {}/authorized_keys read again: {} keys", d->second.dir, fresh->allowed.size());
  d->second.keys = std::move(fresh->allowed);
  return d->second.keys.count(key) > 0;
}

// Request: version, request id, domain, address, identity, mechanism,
// credentials (CURVE: the client's public key). Reply: version, request id,
// status code, status text, user id, metadata.
void zap_authenticator::serve() {
  while (!stop_) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    try {
      zmq::poll(&item, 1, std::chrono::milliseconds(200));
      if (!(item.revents & ZMQ_POLLIN)) continue;
      std::vector<std::string> parts;
      while (true) {
        zmq::message_t m;
        if (!on_through_signals([&] { return socket_.recv(m, zmq::recv_flags::none); })) break;
        parts.push_back(m.to_string());
        if (!m.more()) break;
      }
      bool ok = parts.size() >= 7 && parts[0] == "1.0" && parts[5] == "CURVE" && allowed(parts[2], parts[6]);
      if (!ok && parts.size() >= 7) {
        std::lock_guard lock(mutex_);
        if (refused_seen_.insert(parts[6]).second)
          spdlog::warn("bus: refused a peer from {} (mechanism {}): its public key {} is not in the allow list",
                       parts[3], parts[5], z85(parts[6]));
      }
      std::string id = parts.size() > 1 ? parts[1] : "";
      std::vector<std::string> reply{"1.0", id, ok ? "200" : "400", ok ? "OK" : "key not in the allow list",
                                     ok ? z85(parts[6]) : "", ""};
      for (std::size_t i = 0; i < reply.size(); ++i)
        on_through_signals([&] {
          return socket_.send(zmq::buffer(reply[i]),
                              i + 1 < reply.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
        });
    } catch (const zmq::error_t& e) {
      if (e.num() == ETERM) return;
      if (e.num() != EINTR) spdlog::error("bus: ZAP handler: {}", e.what());
    }
  }
}

}  // namespace crucible::bus
