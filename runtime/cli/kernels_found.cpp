#include "runtime/cli/kernels_found.hpp"

#include <algorithm>
#include <charconv>
#include <ctime>
#include <map>

namespace crucible::cli {

namespace {

// Digits only, at least one, small enough for an int.
std::optional<int> whole_number(std::string_view s) {
  int v = 0;
  if (s.empty() || s.size() > 9 || s[0] < '0' || s[0] > '9') return std::nullopt;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// Whether a beats b for its task: verified first, then the reward, then
// the earlier settlement, then the smaller id (so that the choice is stable).
bool better(const settled_row& a, const settled_row& b) {
  if (a.verified != b.verified) return a.verified;
  if (a.reward != b.reward) return a.reward > b.reward;
  if (a.settled_ns != b.settled_ns) return a.settled_ns < b.settled_ns;
  return a.id < b.id;
}

}  // namespace

std::vector<settled_row> best_kernels(const std::vector<settled_row>& rows) {
  std::map<std::string, const settled_row*> best;
  for (const auto& r : rows) {
    if (r.status != "Success") continue;
    auto [it, fresh] = best.try_emplace(r.task, &r);
    if (!fresh && better(r, *it->second)) it->second = &r;
  }
  std::vector<settled_row> out;
  for (const auto& [task, r] : best) out.push_back(*r);
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return cuda_l1_less(a.task, b.task); });
  return out;
}

std::optional<kernelbench_id> kernelbench_id_of(const std::string& task) {
  std::string_view name(task);
  const auto slash = name.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? name : name.substr(slash + 1);
  // "L1-19"
  if (last.size() > 1 && last[0] == 'L') {
    const auto dash = last.find('-');
    if (dash != std::string_view::npos) {
      auto level = whole_number(last.substr(1, dash - 1));
      auto id = whole_number(last.substr(dash + 1));
      if (level && id) return kernelbench_id{*level, *id};
    }
  }
  // "level1/19", "level1/19_ReLU", "level1/19_ReLU.py"
  if (slash == std::string_view::npos) return std::nullopt;
  const std::string_view parent = name.substr(0, slash);
  const auto parent_slash = parent.rfind('/');
  const std::string_view dir = parent_slash == std::string_view::npos ? parent : parent.substr(parent_slash + 1);
  if (dir.substr(0, 5) != "level") return std::nullopt;
  auto level = whole_number(dir.substr(5));
  auto id = whole_number(last.substr(0, std::min(last.find('_'), last.find('.'))));
  if (level && id) return kernelbench_id{*level, *id};
  return std::nullopt;
}

bool cuda_l1_less(const std::string& a, const std::string& b) {
  auto ia = kernelbench_id_of(a), ib = kernelbench_id_of(b);
  if (ia && ib && (ia->level != ib->level || ia->task != ib->task))
    return std::tie(ia->level, ia->task) < std::tie(ib->level, ib->task);
  if (ia.has_value() != ib.has_value()) return ia.has_value();
  return a < b;
}

std::string iso_time(std::int64_t ns) {
  const std::time_t seconds = static_cast<std::time_t>(ns / 1000000000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return text;
}

nlohmann::ordered_json kernel_line(const settled_row& best, const std::optional<std::string>& ref_code) {
  using json = nlohmann::ordered_json;
  auto id = kernelbench_id_of(best.task);
  json j;
  j["level_id"] = id ? json(id->level) : json(nullptr);
  j["task_id"] = id ? json(id->task) : json(nullptr);
  j["ref_code"] = ref_code ? json(*ref_code) : json(nullptr);
  j["custom_code"] = best.code.empty() ? json(nullptr) : json(best.code);
  j["score_default"] = best.reward;
  j["task"] = best.task;
  j["candidate_id"] = best.id;
  j["policy_version"] = best.policy_version;
  j["found_unix"] = best.settled_ns / 1000000000;
  j["found"] = iso_time(best.settled_ns);
  j["verified"] = best.verified;
  return j;
}

}  // namespace crucible::cli
