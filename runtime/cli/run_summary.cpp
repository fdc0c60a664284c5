#include "runtime/cli/run_summary.hpp"

#include <algorithm>
#include <map>

#include "messages/codec.hpp"

namespace crucible::cli {

result<std::vector<settled_row>> read_settlements(referee::candidate_ledger& ledger, const std::string& prefix) {
  auto records = ledger.settled(prefix);
  if (!records) return records.error();
  std::vector<settled_row> rows;
  for (const auto& r : *records) {
    auto env = messages::open(r.settlement);
    const msg::Settlement* s = env ? (*env)->payload_as_Settlement() : nullptr;
    if (!s) return make_error(errc::corrupt, "candidate " + r.id + ": its settlement does not decode");
    settled_row row;
    row.id = r.id;
    row.group = std::string(messages::str(s->group_id()));
    row.task = r.task;
    row.status = msg::EnumNameSettlementStatus(s->status());
    row.reason = std::string(messages::str(s->reason()));
    row.reward = s->reward();
    row.speedup = s->speedup_raw();
    row.verified = s->verified();
    row.policy_version = s->policy_version();
    row.submitted_ns = r.submitted_ns;
    row.settled_ns = s->settled_ns();
    row.measurement_of = r.reused_from;
    if (auto c = messages::open(r.candidate); c && (*c)->payload_as_Candidate())
      row.code = std::string(messages::str((*c)->payload_as_Candidate()->code()));
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.submitted_ns < b.submitted_ns; });
  return rows;
}

std::vector<group_row> groups_of(const std::vector<settled_row>& rows) {
  std::map<std::string, group_row> by_id;
  for (const auto& r : rows) {
    auto [it, fresh] = by_id.try_emplace(r.group);
    auto& g = it->second;
    if (fresh) {
      g.id = r.group;
      g.task = r.task;
      g.policy_version = r.policy_version;
      g.started_ns = r.submitted_ns;
    }
    g.started_ns = std::min(g.started_ns, r.submitted_ns);
    g.settled_ns = std::max(g.settled_ns, r.settled_ns);
    ++g.samples;
    if (r.status == "Success") ++g.successes;
    g.reward_sum += r.reward;
  }
  std::vector<group_row> out;
  for (auto& [id, g] : by_id) out.push_back(std::move(g));
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.started_ns < b.started_ns; });
  return out;
}

group_span span_of(const std::vector<group_row>& groups, std::size_t first, std::size_t count) {
  group_span s;
  double reward = 0;
  std::size_t successes = 0;
  for (std::size_t i = first; i < std::min(groups.size(), first + count); ++i) {
    ++s.groups;
    s.samples += groups[i].samples;
    successes += groups[i].successes;
    reward += groups[i].reward_sum;
  }
  if (s.samples) {
    s.mean_reward = reward / static_cast<double>(s.samples);
    s.success_rate = static_cast<double>(successes) / static_cast<double>(s.samples);
  }
  return s;
}

}  // namespace crucible::cli
