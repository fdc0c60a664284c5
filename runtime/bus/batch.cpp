#include "runtime/bus/batch.hpp"

#include <cstring>

namespace crucible::bus {

namespace {

constexpr std::uint8_t header[8] = {0, 0, 0, 0, 'C', 'R', 'B', 'T'};

std::size_t padded(std::size_t n) { return (n + 7) & ~std::size_t{7}; }

}  // namespace

bool is_batch(std::span<const std::uint8_t> data) {
  return data.size() >= sizeof header && std::memcmp(data.data(), header, sizeof header) == 0;
}

bytes join_batch(std::span<const std::span<const std::uint8_t>> messages) {
  std::size_t total = sizeof header;
  for (auto m : messages) total += 8 + padded(m.size());
  bytes out(total, 0);
  std::memcpy(out.data(), header, sizeof header);
  std::size_t at = sizeof header;
  for (auto m : messages) {
    auto n = static_cast<std::uint32_t>(m.size());
    for (int i = 0; i < 4; ++i) out[at + i] = static_cast<std::uint8_t>(n >> (8 * i));
    at += 8;  // the length word, padded so that each message starts 8-aligned
    if (!m.empty()) std::memcpy(out.data() + at, m.data(), m.size());
    at += padded(m.size());
  }
  return out;
}

std::vector<std::span<const std::uint8_t>> split_batch(std::span<const std::uint8_t> data) {
  std::vector<std::span<const std::uint8_t>> out;
  if (!is_batch(data)) return out;
  std::size_t at = sizeof header;
  while (at < data.size()) {
    if (data.size() - at < 8) return {};
    std::uint32_t n = 0;
    for (int i = 0; i < 4; ++i) n |= static_cast<std::uint32_t>(data[at + i]) << (8 * i);
    at += 8;
    if (n > data.size() - at) return {};
    out.push_back(data.subspan(at, n));
    at += padded(n);
  }
  return out;
}

}  // namespace crucible::bus
