#include "tests/support/chaos_records.hpp"

#include <algorithm>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "actors/exemplar/exemplar_keys.hpp"
#include "actors/exemplar/exemplar_store.hpp"
#include "actors/referee/candidate_ledger.hpp"
#include "actors/referee/referee_wire.hpp"
#include "messages/domain_generated.h"
#include "storage/rocksdb_store.hpp"
#include "tests/support/process.hpp"

namespace crucible::testing {

namespace {

using messages::str;

// "rollout-0/g12-v3" -> ("rollout-0", 12); nothing for another shape.
std::optional<std::pair<std::string, std::uint64_t>> group_number(const std::string& group_id) {
  auto at = group_id.rfind("/g");
  auto dash = group_id.find("-v", at == std::string::npos ? 0 : at);
  if (at == std::string::npos || dash == std::string::npos) return std::nullopt;
  try {
    return std::pair{group_id.substr(0, at), std::stoull(group_id.substr(at + 2, dash - at - 2))};
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

struct settled_candidate {
  std::string group;
  std::vector<std::uint8_t> settlement;
  msg::SettlementStatus status{};
  bool insert_wanted = false, inserted = false;
};

// The referee's ledger: every candidate settled, published, inserted where wanted.
std::map<std::string, settled_candidate> check_ledger(const chaos_run& run, chaos_findings& f) {
  std::map<std::string, settled_candidate> out;
  auto kv = storage::open_rocksdb(run.referee_ledger);
  if (!kv) {
    f.violations.push_back("the referee's ledger does not open: " + kv.error().text());
    return out;
  }
  referee::candidate_ledger ledger(std::shared_ptr<storage::kv_store>(std::move(*kv)));
  auto unfinished = ledger.unfinished();
  if (!unfinished) f.violations.push_back("the referee's ledger: " + unfinished.error().text());
  else
    for (const auto& r : *unfinished)
      f.violations.push_back(fmt::format("candidate {} is unfinished in the referee's ledger (stage {}, published {}, "
                                         "insert wanted {}, inserted {})",
                                         r.id, referee::to_string(r.at), r.published, r.insert_wanted, r.inserted));
  auto settled = ledger.settled("");
  if (!settled) {
    f.violations.push_back("the referee's ledger: " + settled.error().text());
    return out;
  }
  std::map<msg::SettlementStatus, int> by_status;
  for (const auto& r : *settled) {
    auto* s = referee::payload_of<msg::Settlement>(r.settlement);
    if (!s || str(s->candidate_id()) != r.id) {
      f.violations.push_back("candidate " + r.id + ": its settlement in the ledger does not decode as its own");
      continue;
    }
    ++by_status[s->status()];
    out[r.id] = {std::string(str(s->group_id())), r.settlement, s->status(), r.insert_wanted, r.inserted};
  }
  std::string counts;
  for (auto [status, n] : by_status) counts += fmt::format(" {} {}", n, msg::EnumNameSettlementStatus(status));
  f.checked.push_back(fmt::format("referee ledger: {} candidates, each settled once, published and (clean "
                                  "successes) inserted; none unfinished ({})",
                                  out.size(), counts.empty() ? " none" : counts.substr(1)));
  for (const auto& id : run.fed) {
    if (!out.count(id)) f.violations.push_back("fed candidate " + id + " is not settled in the referee's ledger");
    else if (run.fed_answers.count(id) && run.fed_answers.at(id) != out[id].settlement)
      f.violations.push_back("fed candidate " + id + ": its settle job's answer differs from the ledger's settlement");
  }
  f.checked.push_back(fmt::format("fed candidates: {} answered, each with the ledger's one settlement, byte for byte",
                                  run.fed.size()));
  return out;
}

// The exemplar store: exactly the clean successes, each once, statistics
// equal to a recount.
void check_exemplars(const chaos_run& run, const std::map<std::string, settled_candidate>& settled,
                     chaos_findings& f) {
  auto kv = storage::open_rocksdb(run.exemplar_db);
  if (!kv) return f.violations.push_back("the exemplar store does not open: " + kv.error().text());
  std::shared_ptr<storage::kv_store> shared(std::move(*kv));
  std::map<std::string, int> stored;  // candidate id -> times stored (under any task)
  auto scanned = shared->scan(storage::family::exemplars, "", [&](std::string_view key, std::string_view) {
    if (auto parts = exemplar::keys::parse_exemplar_key(key)) ++stored[parts->id];
    return true;
  });
  if (!scanned) return f.violations.push_back("the exemplar store: " + scanned.error().text());
  std::size_t wanted = 0;
  for (const auto& [id, c] : settled) {
    if (!c.insert_wanted) continue;
    ++wanted;
    if (stored[id] != 1)
      f.violations.push_back(fmt::format("settled clean success {} is in the exemplar store {} times", id, stored[id]));
  }
  for (const auto& [id, n] : stored)
    if (!settled.count(id) || !settled.at(id).insert_wanted)
      f.violations.push_back("exemplar " + id + " is not a settled clean success of the referee's ledger");
  auto store = exemplar::exemplar_store::open(shared);
  if (!store) return f.violations.push_back("the exemplar store: " + store.error().text());
  auto tasks = (*store)->tasks();
  std::size_t buckets = 0;
  for (const auto& task : tasks ? *tasks : std::vector<std::string>{}) {
    auto stats = (*store)->stats(task);
    auto recount = (*store)->recount(task);
    if (!stats || !recount || *stats != *recount)
      f.violations.push_back("exemplar store task " + task + ": bucket statistics differ from a recount");
    buckets += stats ? stats->size() : 0;
  }
  f.checked.push_back(fmt::format("exemplar store: {} exemplars, exactly the {} settled clean successes, each once; "
                                  "statistics of {} buckets equal a recount",
                                  stored.size(), wanted, buckets));
}

std::uint64_t checkpoint_version(const std::string& dir, chaos_findings& f) {
  std::string step = read_file(dir + "/latest");
  while (!step.empty() && step.back() == '\n') step.pop_back();
  auto state = nlohmann::json::parse(read_file(dir + "/" + step + "/state.json"), nullptr, false);
  if (step.empty() || state.is_discarded() || !state.contains("version")) {
    f.violations.push_back("the learner's checkpoint in " + dir + " does not read");
    return 0;
  }
  return state["version"].get<std::uint64_t>();
}

// The learner: versions never go back; the versions that stand (the last
// line written for each) hold every rollout group exactly once.
void check_learner(const chaos_run& run, const std::map<std::string, settled_candidate>& settled,
                   chaos_findings& f) {
  std::istringstream in(read_file(run.learner_metrics));
  std::map<std::uint64_t, std::vector<std::string>> standing;  // version -> groups, the last line wins
  std::uint64_t previous = 0, lines = 0, repeated = 0;
  for (std::string line; std::getline(in, line);) {
    auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.contains("version")) {
      f.violations.push_back("the learner's metrics file holds a line that does not parse: " + line);
      continue;
    }
    const auto v = j["version"].get<std::uint64_t>();
    ++lines;
    // A version trained again after a kill before its checkpoint repeats
    // the number; a later one follows it by one.
    if (v < previous || v > previous + 1)
      f.violations.push_back(fmt::format("learner version {} follows version {}", v, previous));
    repeated += v == previous;
    previous = v;
    standing[v] = j.value("groups", std::vector<std::string>{});
  }
  const std::uint64_t final_version = checkpoint_version(run.checkpoint_dir, f);
  if (final_version != previous)
    f.violations.push_back(fmt::format("the learner's last checkpoint is version {}, its last step {}", final_version,
                                       previous));
  f.checked.push_back(fmt::format("learner: {} steps written, versions 1 to {} never going back ({} trained again "
                                  "after a kill before their checkpoint), the last checkpoint is the last version",
                                  lines, previous, repeated));

  std::map<std::pair<std::string, std::uint64_t>, std::vector<std::string>> trained;  // (rollout, n) -> group ids
  std::size_t groups = 0;
  for (const auto& [v, ids] : standing)
    for (const auto& id : ids) {
      ++groups;
      auto n = group_number(id);
      if (!n) f.violations.push_back(fmt::format("version {} trained a group of unknown shape: {}", v, id));
      else trained[*n].push_back(id + fmt::format(" (v{})", v));
    }
  for (const auto& [rollout, target] : run.groups)
    for (std::uint64_t n = 0; n < target; ++n) {
      auto it = trained.find({rollout, n});
      if (it == trained.end()) f.violations.push_back(fmt::format("group {} of {} was never trained", n, rollout));
      else if (it->second.size() > 1)
        f.violations.push_back(fmt::format("group {} of {} was trained {} times: {}", n, rollout, it->second.size(),
                                           fmt::join(it->second, ", ")));
    }
  for (const auto& [key, ids] : trained)
    if (!run.groups.count(key.first) || key.second >= run.groups.at(key.first))
      f.violations.push_back("a group beyond those asked for was trained: " + ids.front());
  // Each trained group's samples are settled candidates of the ledger.
  std::map<std::string, std::uint64_t> samples;  // group id -> settled candidates
  for (const auto& [id, c] : settled) ++samples[c.group];
  for (const auto& [v, ids] : standing)
    for (const auto& id : ids)
      if (samples[id] == 0 || samples[id] > run.group_size)
        f.violations.push_back(fmt::format("trained group {} has {} settled candidates (group size {})", id,
                                           samples[id], run.group_size));
  std::uint64_t asked = 0, abandoned = 0;
  for (const auto& [rollout, target] : run.groups) asked += target;
  // Candidates of a group sampled by an incarnation killed before sending
  // it: settled (once), and sampled again under new ids by the next one.
  for (const auto& [group, n] : samples)
    if (group_number(group) && !std::any_of(standing.begin(), standing.end(), [&](const auto& v) {
          return std::find(v.second.begin(), v.second.end(), group) != v.second.end();
        }))
      abandoned += n;
  f.checked.push_back(fmt::format("groups: {} trained in the standing versions, each of the {} asked for exactly "
                                  "once, each with 1 to {} settled candidates ({} settled candidates of samplings "
                                  "abandoned by a killed rollout)",
                                  groups, asked, run.group_size, abandoned));
  for (const auto& [rollout, file] : run.state_files) {
    const std::uint64_t next = std::strtoull(read_file(file).c_str(), nullptr, 10);
    if (next != run.groups.at(rollout))
      f.violations.push_back(fmt::format("{}'s state file says group {} is next, not {}", rollout, next,
                                         run.groups.at(rollout)));
  }
}

}  // namespace

chaos_findings check_chaos_records(const chaos_run& run) {
  chaos_findings f;
  auto settled = check_ledger(run, f);
  check_exemplars(run, settled, f);
  check_learner(run, settled, f);
  return f;
}

}  // namespace crucible::testing
