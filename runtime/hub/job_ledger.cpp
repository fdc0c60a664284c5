#include "runtime/hub/job_ledger.hpp"

#include <map>
#include <cstring>

namespace crucible::hub {

using storage::family;

namespace {
// "<kind>\0<id>": the NUL ends the prefix that the store's insert hint keys
// on (rocksdb_options::insert_hint_by_nul_prefix), so a run of submits,
// results or acknowledgements inserts from where the last one went.
std::string key(char kind, std::string_view id) {
  std::string k;
  k.reserve(id.size() + 2);
  k.push_back(kind);
  k.push_back('\0');
  k.append(id);
  return k;
}
std::string prefix(char kind) { return std::string{kind, '\0'}; }
std::string as_string(std::span<const std::uint8_t> b) { return std::string(reinterpret_cast<const char*>(b.data()), b.size()); }
}  // namespace

void job_ledger::stage_submit(std::string_view id, std::span<const std::uint8_t> env) {
  batch_.put(family::jobs, key('p', id), as_string(env));
}

void job_ledger::stage_result(std::string_view id, std::span<const std::uint8_t> env) {
  batch_.put(family::jobs, key('r', id), as_string(env));
}

void job_ledger::stage_acked(std::string_view id, std::int64_t now_ns) {
  batch_.erase(family::jobs, key('p', id));
  batch_.erase(family::jobs, key('r', id));
  std::string t(sizeof now_ns, '\0');
  std::memcpy(t.data(), &now_ns, sizeof now_ns);
  batch_.put(family::jobs, key('a', id), std::move(t));
}

status job_ledger::commit() {
  if (batch_.empty()) return {};
  auto s = kv_.write(batch_, durability_);
  batch_.clear();
  return s;
}

result<bool> job_ledger::was_acked(std::string_view id) {
  auto v = kv_.get(family::jobs, key('a', id));
  if (!v) return v.error();
  return v->has_value();
}

result<std::vector<job_ledger::entry>> job_ledger::load() {
  std::vector<entry> entries;
  std::map<std::string, std::size_t, std::less<>> index;
  auto s = kv_.scan(family::jobs, prefix('p'), [&](std::string_view k, std::string_view v) {
    index.emplace(std::string(k.substr(2)), entries.size());
    entries.push_back({std::vector<std::uint8_t>(v.begin(), v.end()), {}});
    return true;
  });
  if (!s) return s.error();
  s = kv_.scan(family::jobs, prefix('r'), [&](std::string_view k, std::string_view v) {
    auto it = index.find(k.substr(2));
    if (it != index.end()) entries[it->second].result.assign(v.begin(), v.end());
    return true;
  });
  if (!s) return s.error();
  return entries;
}

result<std::size_t> job_ledger::purge_acked(std::int64_t cutoff_ns) {
  storage::write_batch purge;
  auto s = kv_.scan(family::jobs, prefix('a'), [&](std::string_view k, std::string_view v) {
    std::int64_t t = 0;
    if (v.size() == sizeof t) std::memcpy(&t, v.data(), sizeof t);
    if (t < cutoff_ns) purge.erase(family::jobs, std::string(k));
    return true;
  });
  if (!s) return s.error();
  auto n = purge.ops().size();
  if (n) CRUCIBLE_TRY(kv_.write(purge, durability_));
  return n;
}

}  // namespace crucible::hub
