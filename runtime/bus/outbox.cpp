#include "runtime/bus/outbox.hpp"

#include <span>
#include <unordered_map>

#include <spdlog/spdlog.h>

#include "runtime/bus/batch.hpp"

namespace crucible::bus {

std::size_t transmit(transport& t, outbox& out) {
  std::size_t failed = 0;
  auto note = [&](const status& s, const std::string& to) {
    if (s.ok()) return;
    ++failed;
    spdlog::debug("send to '{}' failed: {}", to, s.error().message);
  };
  // Peers in the order of their first message, each with its messages.
  std::vector<std::string_view> order;
  std::unordered_map<std::string_view, std::vector<std::span<const std::uint8_t>>> groups;
  for (auto& o : out) {
    if (o.via == channel::event) {
      note(t.publish(o.to, o.data), o.to);
      continue;
    }
    auto [it, fresh] = groups.try_emplace(o.to);
    if (fresh) order.push_back(o.to);
    it->second.emplace_back(o.data);
  }
  for (auto to : order) {
    auto& msgs = groups[to];
    std::size_t begin = 0;
    while (begin < msgs.size()) {
      std::size_t end = begin, bytes_in = 0;
      while (end < msgs.size() && end - begin < batch_max_messages &&
             (end == begin || bytes_in + msgs[end].size() <= batch_max_bytes))
        bytes_in += msgs[end++].size();
      note(t.send_batch(to, std::span(msgs).subspan(begin, end - begin)), std::string(to));
      begin = end;
    }
  }
  return failed;
}

}  // namespace crucible::bus
