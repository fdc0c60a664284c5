#include "runtime/node/bus_loop.hpp"

#include <spdlog/spdlog.h>

namespace crucible::node {

using namespace std::chrono_literals;

bus_loop::bus_loop(std::unique_ptr<bus::transport> transport, std::size_t batch)
    : transport_(std::move(transport)), batch_(batch) {}

bus_loop::~bus_loop() { stop(); }

void bus_loop::start(deliver_fn deliver) {
  thread_ = std::thread([this, d = std::move(deliver)]() mutable { run(std::move(d)); });
}

void bus_loop::stop() {
  if (stopping_.exchange(true)) return;
  transport_->wake();
  if (thread_.joinable()) thread_.join();
}

void bus_loop::post(bus::outbox out) {
  if (out.empty()) return;
  {
    std::lock_guard lock(mu_);
    if (pending_.empty()) {
      pending_ = std::move(out);
    } else {
      for (auto& o : out) pending_.push_back(std::move(o));
    }
  }
  transport_->wake();
}

void bus_loop::flush() {
  bus::outbox out;
  {
    std::lock_guard lock(mu_);
    out.swap(pending_);
  }
  for (auto& o : out) {
    auto s = o.via == bus::channel::direct ? transport_->send(o.to, o.data) : transport_->publish(o.to, o.data);
    if (s.ok()) {
      ++sent_;
    } else {
      // The protocol resends what matters; a peer that is gone is not an error here.
      ++send_failures_;
      spdlog::debug("send to '{}' failed: {}", o.to, s.error().message);
    }
  }
}

void bus_loop::run(deliver_fn deliver) {
  std::vector<bus::frame> frames;
  while (!stopping_) {
    flush();
    frames.clear();
    auto s = transport_->receive(frames, batch_, 100ms);
    if (!s.ok()) {
      spdlog::error("bus receive failed on {}: {}", transport_->describe(), s.error().message);
      std::this_thread::sleep_for(10ms);
      continue;
    }
    if (!frames.empty()) {
      received_ += frames.size();
      deliver(std::move(frames));
      frames = {};
    }
  }
  flush();
}

}  // namespace crucible::node
