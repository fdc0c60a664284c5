#include "actors/referee/remembered_peers.hpp"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

namespace crucible::referee {

using storage::family;

namespace {
constexpr std::string_view prefix = "p/";

bool remembered(bool required_detector, const std::vector<std::string>& kinds) {
  return required_detector || std::find(kinds.begin(), kinds.end(), "exemplar.insert") != kinds.end();
}

// "detector DEADLINE_MS\nKIND..." or "exemplar 0\nKIND...": names and kinds
// never hold a newline.
std::string encode(const remembered_peers::peer& d) {
  std::string out = (d.detector ? "detector " : "exemplar ") + std::to_string(d.deadline_ms);
  for (auto& k : d.kinds) out += "\n" + k;
  return out;
}

std::optional<remembered_peers::peer> decode(std::string_view text) {
  remembered_peers::peer d;
  auto line_end = text.find('\n');
  auto first = text.substr(0, line_end);
  auto space = first.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  auto what = first.substr(0, space);
  if (what != "detector" && what != "exemplar") return std::nullopt;
  d.detector = what == "detector";
  first.remove_prefix(space + 1);
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

status remembered_peers::recover(std::int64_t now) {
  std::optional<error> bad;
  auto s = kv_->scan(family::candidates, prefix, [&](std::string_view key, std::string_view value) {
    auto d = decode(value);
    if (!d) {
      bad = make_error(errc::corrupt, fmt::format("candidates/{}: not a remembered peer's record: '{}'", key, value));
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

status remembered_peers::joined(const std::string& name, bool required_detector, const std::vector<std::string>& kinds,
                                std::uint32_t deadline_ms) {
  if (!remembered(required_detector, kinds)) return listed_.count(name) ? forget(name) : status{};
  peer d{required_detector, kinds, required_detector ? deadline_ms : 0, 0};
  auto it = listed_.find(name);
  if (it != listed_.end() && it->second.detector == d.detector && it->second.kinds == kinds &&
      it->second.deadline_ms == d.deadline_ms) {
    it->second.away_until_ns = 0;
    return {};
  }
  storage::write_batch b;
  b.put(family::candidates, std::string(prefix) + name, encode(d));
  CRUCIBLE_TRY(kv_->write(b));
  listed_[name] = std::move(d);
  return {};
}

result<const remembered_peers::peer*> remembered_peers::left(const std::string& name, std::int64_t now) {
  auto it = listed_.find(name);
  if (it == listed_.end()) return nullptr;
  if (grace_.count() == 0) {
    CRUCIBLE_TRY(forget(name));
    return nullptr;
  }
  it->second.away_until_ns = now + std::chrono::nanoseconds(grace_).count();
  return &it->second;
}

result<std::vector<std::string>> remembered_peers::expire(std::int64_t now) {
  std::vector<std::string> gone;
  for (auto& [name, d] : listed_)
    if (d.away_until_ns && now >= d.away_until_ns) gone.push_back(name);
  for (auto& name : gone) CRUCIBLE_TRY(forget(name));
  return gone;
}

std::vector<std::pair<std::string, const remembered_peers::peer*>> remembered_peers::away(std::int64_t now) const {
  std::vector<std::pair<std::string, const peer*>> out;
  for (auto& [name, d] : listed_)
    if (d.away_until_ns && now < d.away_until_ns) out.emplace_back(name, &d);
  return out;
}

std::size_t remembered_peers::away_count() const {
  std::size_t n = 0;
  for (auto& [name, d] : listed_) n += d.away_until_ns != 0;
  return n;
}

status remembered_peers::forget(const std::string& name) {
  storage::write_batch b;
  b.erase(family::candidates, std::string(prefix) + name);
  CRUCIBLE_TRY(kv_->write(b));
  listed_.erase(name);
  return {};
}

}  // namespace crucible::referee
