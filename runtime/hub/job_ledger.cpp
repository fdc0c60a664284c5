#include "runtime/hub/job_ledger.hpp"

#include <algorithm>
#include <cstring>

#include <spdlog/spdlog.h>

#include "storage/crc32c.hpp"

namespace crucible::hub {

using storage::family;

namespace {
// "<kind>\0<id>": the NUL ends the prefix that the store's insert hint keys
// on (rocksdb_options::insert_hint_by_nul_prefix).
std::string key(char kind, std::string_view id) {
  std::string k;
  k.reserve(id.size() + 2);
  k.push_back(kind);
  k.push_back('\0');
  k.append(id);
  return k;
}
std::string prefix(char kind) { return std::string{kind, '\0'}; }

constexpr std::size_t header_size = 8;  // u32 crc, u32 body length
constexpr std::size_t max_id_size = 0xffff;

void put_u32(char* p, std::uint32_t v) { std::memcpy(p, &v, 4); }
std::uint32_t get_u32(const char* p) {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// One record parsed from a segment.
struct parsed {
  char type;
  std::string_view id, data, whole;
};

// The record at pos, or nothing when the rest of the segment is not a whole
// record with a matching checksum (a torn write at the end).
std::optional<parsed> parse_at(std::string_view seg, std::size_t pos) {
  if (seg.size() - pos < header_size) return std::nullopt;
  const char* p = seg.data() + pos;
  std::uint32_t crc = get_u32(p), body = get_u32(p + 4);
  if (body < 3 || seg.size() - pos - header_size < body) return std::nullopt;
  if (storage::crc32c(0, p + 4, 4 + body) != crc) return std::nullopt;
  std::uint16_t id_size;
  std::memcpy(&id_size, p + header_size + 1, 2);
  if (3u + id_size > body) return std::nullopt;
  parsed r;
  r.type = p[header_size];
  r.id = std::string_view(p + header_size + 3, id_size);
  r.data = std::string_view(p + header_size + 3 + id_size, body - 3 - id_size);
  r.whole = std::string_view(p, header_size + body);
  return r;
}
}  // namespace

void job_ledger::stage_record(char type, std::string_view id, std::span<const std::uint8_t> data) {
  CRUCIBLE_CHECK(id.size() <= max_id_size, "job ids are short");
  std::size_t body = 3 + id.size() + data.size();
  std::size_t start = buf_.size();
  buf_.resize(start + header_size + body);
  char* p = buf_.data() + start;
  put_u32(p + 4, static_cast<std::uint32_t>(body));
  p[header_size] = type;
  auto id_size = static_cast<std::uint16_t>(id.size());
  std::memcpy(p + header_size + 1, &id_size, 2);
  std::memcpy(p + header_size + 3, id.data(), id.size());
  if (!data.empty()) std::memcpy(p + header_size + 3 + id.size(), data.data(), data.size());
  put_u32(p, storage::crc32c(0, p + 4, 4 + body));
  staged_.push_back({type, std::string(id), {0, start, static_cast<std::uint32_t>(header_size + body)}});
}

void job_ledger::stage_raw(char type, std::string_view id, std::string_view record) {
  std::size_t start = buf_.size();
  buf_.append(record);
  staged_.push_back({type, std::string(id), {0, start, static_cast<std::uint32_t>(record.size())}});
}

void job_ledger::stage_submit(std::string_view id, std::span<const std::uint8_t> env) { stage_record('p', id, env); }

void job_ledger::stage_result(std::string_view id, std::span<const std::uint8_t> env) { stage_record('r', id, env); }

void job_ledger::stage_acked(std::string_view id, std::int64_t now_ns) {
  std::string t(sizeof now_ns, '\0');
  std::memcpy(t.data(), &now_ns, sizeof now_ns);
  batch_.put(family::jobs, key('a', id), std::move(t));
  stage_record('a', id, {});
}

void job_ledger::release(const record_at& r) {
  if (r.segment == 0) return;
  auto it = live_in_.find(r.segment);
  if (it != live_in_.end() && --it->second == 0) live_in_.erase(it);
}

void job_ledger::apply(const staged_record& s) {
  if (s.type == 'a') {
    auto it = live_.find(s.id);
    if (it == live_.end()) return;
    release(it->second.submit);
    release(it->second.result);
    live_.erase(it);
    return;
  }
  auto& j = live_[s.id];
  record_at& slot = s.type == 'p' ? j.submit : j.result;
  release(slot);
  slot = s.at;
  ++live_in_[s.at.segment];
}

void job_ledger::drop_staged() {
  batch_.clear();
  buf_.clear();
  staged_.clear();
}

// The log part of a commit: append, sync when asked, then account. On an
// error what was staged stays staged for the next attempt.
status job_ledger::write_staged() {
  if (buf_.empty()) return {};
  auto s = log_.append(segment_, buf_);
  segments_.insert(segment_);
  bool torn = !s.ok() && s.error().code == errc::corrupt;
  if (s.ok() && options_.durability == storage::durability::synced) {
    s = log_.sync(segment_);
    torn = !s.ok();  // written but maybe not durable: write it again elsewhere
  }
  if (!s.ok()) {
    if (torn) {
      // The segment may end in a torn record now: never append to it again
      // (load() reads a segment up to its first bad record).
      ++segment_;
      segment_size_ = 0;
      carried_ = 0;
    }
    return s;
  }
  for (auto& r : staged_) {
    r.at.segment = segment_;
    r.at.offset += segment_size_;
    apply(r);
  }
  segment_size_ += buf_.size();
  buf_.clear();
  staged_.clear();
  return {};
}

status job_ledger::commit() {
  auto s = write_markers_and_log();
  if (s.ok())
    failing_.reset();
  else
    failing_ = s.error();
  return s;
}

status job_ledger::write_markers_and_log() {
  if (!batch_.empty()) {
    CRUCIBLE_TRY(kv_.write(batch_, options_.durability));
    batch_.clear();
  }
  CRUCIBLE_TRY(write_staged());
  // A segment is full once it holds segment_bytes of new records, and at
  // least as many as were carried into it: with a large backlog of live
  // jobs each byte written is copied forward about once, not at every commit.
  if (segment_size_ - carried_ >= std::max<std::uint64_t>(options_.segment_bytes, carried_)) {
    if (auto r = rotate(); !r.ok()) {  // what this commit wrote is durable either way
      drop_staged();                   // copies of records that stay where they are
      spdlog::error("job log: reclaiming old segments failed (retried at the next segment): {}", r.error().text());
    }
  }
  return {};
}

// Starts the next segment; the records of unacknowledged jobs in segments
// older than the one just filled are copied into it, then those segments go.
status job_ledger::rotate() {
  std::uint64_t filled = segment_;
  ++segment_;
  segment_size_ = 0;
  carried_ = 0;
  // A segment with many live records is read whole, once; a few records
  // (the usual case: jobs that run long) are read one by one.
  constexpr std::size_t read_whole_from = 64;
  std::map<std::uint64_t, std::string> whole;
  for (auto seg : segments_)
    if (auto it = live_in_.find(seg); seg < filled && it != live_in_.end() && it->second >= read_whole_from) {
      auto data = log_.read(seg);
      if (!data) return data.error();
      whole.emplace(seg, std::move(*data));
    }
  for (auto& [id, j] : live_) {
    for (const record_at* r : {&j.submit, &j.result}) {
      if (r->segment == 0 || r->segment >= filled) continue;
      std::string one;
      std::string_view from;
      std::size_t at = 0;
      if (auto it = whole.find(r->segment); it != whole.end()) {
        from = it->second;
        at = r->offset;
      } else {
        auto data = log_.read(r->segment, r->offset, r->size);
        if (!data) return data.error();
        one = std::move(*data);
        from = one;
      }
      auto rec = parse_at(from, at);
      if (!rec || rec->whole.size() != r->size || rec->id != id)
        return make_error(errc::corrupt, "job log segment " + std::to_string(r->segment) + " changed under the hub");
      stage_raw(rec->type, id, rec->whole);
    }
  }
  CRUCIBLE_TRY(write_staged());
  carried_ = segment_size_;
  std::vector<std::uint64_t> gone;
  for (auto seg : segments_)
    if (seg < filled) gone.push_back(seg);
  for (auto seg : gone) {
    CRUCIBLE_CHECK(!live_in_.count(seg), "live records were copied out of the segments being removed");
    CRUCIBLE_TRY(log_.remove(seg));
    segments_.erase(seg);
  }
  return {};
}

result<bool> job_ledger::was_acked(std::string_view id) {
  auto v = kv_.get(family::jobs, key('a', id));
  if (!v) return v.error();
  return v->has_value();
}

result<std::vector<job_ledger::entry>> job_ledger::load() {
  drop_staged();
  live_.clear();
  live_in_.clear();
  segments_.clear();

  struct found {
    std::string id, submit, result;
    bool alive = true;
  };
  std::vector<found> jobs;
  std::unordered_map<std::string, std::size_t> index;
  auto slot = [&](std::string_view id) -> found& {
    auto [it, added] = index.try_emplace(std::string(id), jobs.size());
    if (added) jobs.push_back({std::string(id), {}, {}});
    return jobs[it->second];
  };

  auto segs = log_.list();
  if (!segs) return segs.error();
  for (auto seg : *segs) {
    auto data = log_.read(seg);
    if (!data) return data.error();
    std::size_t pos = 0;
    while (pos < data->size()) {
      auto r = parse_at(*data, pos);
      if (!r) {
        spdlog::warn("job log segment {}: {} bytes after offset {} are not a whole record (a torn write): ignored",
                     seg, data->size() - pos, pos);
        break;
      }
      pos += r->whole.size();
      if (r->type == 'a') {
        if (auto it = index.find(std::string(r->id)); it != index.end()) jobs[it->second].alive = false;
        continue;
      }
      found& f = slot(r->id);
      f.alive = true;
      (r->type == 'p' ? f.submit : f.result).assign(r->data);
    }
  }
  // Ledgers written before the job log kept everything in RocksDB.
  std::vector<std::string> legacy_keys;
  for (char kind : {'p', 'r'}) {
    auto s = kv_.scan(family::jobs, prefix(kind), [&](std::string_view k, std::string_view v) {
      legacy_keys.emplace_back(k);
      found& f = slot(k.substr(2));
      (kind == 'p' ? f.submit : f.result).assign(v);
      return true;
    });
    if (!s) return s.error();
  }

  segment_ = segs->empty() ? 1 : segs->back() + 1;
  segment_size_ = 0;
  std::vector<entry> entries;
  auto bytes = [](const std::string& s) { return std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(s.data()), s.size()); };
  for (auto& f : jobs) {
    if (!f.alive) continue;
    if (f.submit.empty()) {
      spdlog::warn("job log: job {} has a result but no submit record: dropped", f.id);
      continue;
    }
    // A marker written just before a kill -9 cut the log write that followed.
    auto acked = was_acked(f.id);
    if (!acked) return acked.error();
    if (*acked) continue;
    stage_submit(f.id, bytes(f.submit));
    if (!f.result.empty()) stage_result(f.id, bytes(f.result));
    entries.push_back({std::vector<std::uint8_t>(f.submit.begin(), f.submit.end()),
                       std::vector<std::uint8_t>(f.result.begin(), f.result.end())});
  }
  // Live records into the fresh segment first; only then may the old
  // segments and the old-format records go.
  CRUCIBLE_TRY(write_staged());
  carried_ = segment_size_;
  if (!legacy_keys.empty()) {
    for (auto& k : legacy_keys) batch_.erase(family::jobs, k);
    auto s = kv_.write(batch_, options_.durability);
    batch_.clear();
    if (!s) return s.error();
  }
  for (auto seg : *segs) CRUCIBLE_TRY(log_.remove(seg));
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
  if (n) CRUCIBLE_TRY(kv_.write(purge, options_.durability));
  return n;
}

}  // namespace crucible::hub
