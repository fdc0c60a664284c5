#include "actors/referee/required_detectors.hpp"

#include <optional>

#include <fmt/format.h>

namespace crucible::referee {

using storage::family;

namespace {
constexpr std::string_view prefix = "d/";

// "DEADLINE_MS\nKIND\nKIND...": names and kinds never hold a newline.
std::string encode(const required_detectors::detector& d) {
  std::string out = std::to_string(d.deadline_ms);
  for (auto& k : d.kinds) out += "\n" + k;
  return out;
}

std::optional<required_detectors::detector> decode(std::string_view text) {
  required_detectors::detector d;
  auto line_end = text.find('\n');
  auto first = text.substr(0, line_end);
  if (first.empty() || first.find_first_not_of("0123456789") != std::string_view::npos || first.size() > 9)
    return std::nullopt;
  d.deadline_ms = static_cast<std::uint32_t>(std::stoul(std::string(first)));
  while (line_end != std::string_view::npos) {
    text.remove_prefix(line_end + 1);
    line_end = text.find('\n');
    d.kinds.emplace_back(text.substr(0, line_end));
  }
  return d;
}
}  // namespace

status required_detectors::recover(std::int64_t now) {
  std::optional<error> bad;
  auto s = kv_->scan(family::candidates, prefix, [&](std::string_view key, std::string_view value) {
    auto d = decode(value);
    if (!d) {
      bad = make_error(errc::corrupt, fmt::format("candidates/{}: not a required detector's record: '{}'", key, value));
      return false;
    }
    d->away_until_ns = now + std::chrono::nanoseconds(grace_).count();
    listed_[std::string(key.substr(prefix.size()))] = std::move(*d);
    return true;
  });
  if (!s) return s;
  if (bad) return *bad;
  return {};
}

status required_detectors::joined(const std::string& name, bool required, const std::vector<std::string>& kinds,
                                  std::uint32_t deadline_ms) {
  if (!required) return listed_.count(name) ? forget(name) : status{};
  auto it = listed_.find(name);
  if (it != listed_.end() && it->second.kinds == kinds && it->second.deadline_ms == deadline_ms) {
    it->second.away_until_ns = 0;
    return {};
  }
  detector d{kinds, deadline_ms, 0};
  storage::write_batch b;
  b.put(family::candidates, std::string(prefix) + name, encode(d));
  CRUCIBLE_TRY(kv_->write(b));
  listed_[name] = std::move(d);
  return {};
}

status required_detectors::left(const std::string& name, std::int64_t now) {
  auto it = listed_.find(name);
  if (it == listed_.end()) return {};
  if (grace_.count() == 0) return forget(name);
  it->second.away_until_ns = now + std::chrono::nanoseconds(grace_).count();
  return {};
}

result<std::vector<std::string>> required_detectors::expire(std::int64_t now) {
  std::vector<std::string> gone;
  for (auto& [name, d] : listed_)
    if (d.away_until_ns && now >= d.away_until_ns) gone.push_back(name);
  for (auto& name : gone) CRUCIBLE_TRY(forget(name));
  return gone;
}

std::vector<std::pair<std::string, const required_detectors::detector*>> required_detectors::away(
    std::int64_t now) const {
  std::vector<std::pair<std::string, const detector*>> out;
  for (auto& [name, d] : listed_)
    if (d.away_until_ns && now < d.away_until_ns) out.emplace_back(name, &d);
  return out;
}

std::size_t required_detectors::away_count() const {
  std::size_t n = 0;
  for (auto& [name, d] : listed_) n += d.away_until_ns != 0;
  return n;
}

status required_detectors::forget(const std::string& name) {
  storage::write_batch b;
  b.erase(family::candidates, std::string(prefix) + name);
  CRUCIBLE_TRY(kv_->write(b));
  listed_.erase(name);
  return {};
}

}  // namespace crucible::referee
