// The one I/O thread of a process: it owns the transport (and so every
// ZeroMQ socket), hands received frames in batches to a callback (which
// forwards them to an actor), and sends what any thread posts. Actors never
// touch the transport; this is the bridge between them and the bus.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

#include "runtime/bus/outbox.hpp"
#include "runtime/bus/transport.hpp"

namespace crucible::node {

class bus_loop {
 public:
  using deliver_fn = std::function<void(std::vector<bus::frame>&&)>;

  // batch: most frames handed over at once.
  explicit bus_loop(std::unique_ptr<bus::transport> transport, std::size_t batch = 1024);
  ~bus_loop();
  bus_loop(const bus_loop&) = delete;
  bus_loop& operator=(const bus_loop&) = delete;

  // Starts the I/O thread; deliver runs on it.
  void start(deliver_fn deliver);
  // Sends what is queued, then stops the thread. Idempotent.
  void stop();
  // Queues messages for the I/O thread to send. Any thread.
  void post(bus::outbox out);
  // Subscribes to an event prefix (before start()).
  status subscribe(std::string_view prefix) { return transport_->subscribe(prefix); }

  std::uint64_t received() const { return received_; }
  std::uint64_t sent() const { return sent_; }
  std::uint64_t send_failures() const { return send_failures_; }
  std::string describe() const { return transport_->describe(); }

 private:
  void run(deliver_fn deliver);
  void flush();

  std::unique_ptr<bus::transport> transport_;
  std::size_t batch_;
  std::mutex mu_;
  bus::outbox pending_;  // GUARDED_BY(mu_)
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> received_{0}, sent_{0}, send_failures_{0};
};

}  // namespace crucible::node
