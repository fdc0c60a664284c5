#include "runtime/bus/outbox.hpp"

#include <span>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "runtime/bus/batch.hpp"

namespace crucible::bus {

std::size_t transmit(transport& t, outbox& out) {
  std::size_t failed = 0;
  auto note = [&](const status& s, std::string_view to) {
    if (s.ok()) return;
    ++failed;
    spdlog::debug("send to '{}' failed: {}", to, s.error().message);
  };
  // Peers in the order of their first message, each with its messages.
  std::vector<std::string_view> order;
  std::unordered_map<std::string_view, std::vector<bytes*>> groups;
  for (auto& o : out) {
    if (o.via == channel::event) {
      note(t.publish(o.to, o.data), o.to);
      continue;
    }
    auto [it, fresh] = groups.try_emplace(o.to);
    if (fresh) order.push_back(o.to);
    it->second.push_back(&o.data);
  }
  for (auto to : order) {
    // Small messages gather into a run that goes as one batch; a large one
    // ends the run and goes alone, so the peer's order is kept.
    std::vector<bytes*> run;
    std::size_t run_bytes = 0;
    auto send_run = [&] {
      if (run.size() == 1) {
        note(t.send_owned(to, std::move(*run[0])), to);
      } else if (run.size() > 1) {
        std::vector<std::span<const std::uint8_t>> views;
        for (bytes* m : run) views.emplace_back(*m);
        note(t.send_batch(to, views), to);
      }
      run.clear();
      run_bytes = 0;
    };
    for (bytes* m : groups[to]) {
      if (m->size() >= batch_alone_bytes) {
        send_run();
        note(t.send_owned(to, std::move(*m)), to);
        continue;
      }
      if (run.size() == batch_max_messages || run_bytes + m->size() > batch_max_bytes) send_run();
      run.push_back(m);
      run_bytes += m->size();
    }
    send_run();
  }
  return failed;
}

}  // namespace crucible::bus
