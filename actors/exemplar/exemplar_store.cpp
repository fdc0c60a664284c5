#include "actors/exemplar/exemplar_store.hpp"

#include <cmath>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "actors/exemplar/exemplar_keys.hpp"

namespace crucible::exemplar {

using storage::family;

const char* to_string(insert_outcome o) { return o == insert_outcome::inserted ? "inserted" : "duplicate"; }

status validate_task(std::string_view task) {
  if (task.empty()) return make_error(errc::invalid_argument, "exemplar task id is empty");
  if (task.find('\0') != std::string_view::npos)
    return make_error(errc::invalid_argument, "exemplar task id contains a NUL byte");
  return status::success();
}

exemplar_store::exemplar_store(std::shared_ptr<storage::kv_store> kv, exemplar_options options)
    : kv_(std::move(kv)),
      options_(options),
      bucketing_(options.scale, options.bucket_width),
      selector_(make_selector(options)) {}

result<std::unique_ptr<exemplar_store>> exemplar_store::open(std::shared_ptr<storage::kv_store> kv,
                                                             exemplar_options options) {
  CRUCIBLE_TRY(validate(options));
  std::unique_ptr<exemplar_store> store(new exemplar_store(std::move(kv), options));
  const std::string policy = store->bucketing_.describe();
  auto stored = store->kv_->get(family::meta, keys::bucketing_key);
  if (!stored.ok()) return stored.error();
  if (!stored->has_value()) {
    storage::write_batch b;
    b.put(family::meta, std::string(keys::bucketing_key), policy);
    CRUCIBLE_TRY(store->kv_->write(b, storage::durability::synced));
  } else if (**stored != policy) {
    return make_error(errc::invalid_argument,
                      fmt::format("exemplar store {} was created with bucketing {}, not {}",
                                  store->kv_->describe(), **stored, policy));
  }
  return store;
}

result<exemplar_store::task_buckets*> exemplar_store::load(std::string_view task) {
  if (auto it = cache_.find(task); it != cache_.end()) return &it->second;
  task_buckets loaded;
  std::optional<error> bad;
  status st = kv_->scan(family::buckets, keys::stats_prefix(task), [&](std::string_view k, std::string_view v) {
    auto key = keys::parse_stats_key(k);
    auto value = keys::decode_stats(v);
    if (!key || !value) {
      bad = make_error(errc::corrupt, fmt::format("{}: malformed bucket statistics of task {}", kv_->describe(), task));
      return false;
    }
    bucket_summary s{key->bucket, bucketing_.range(key->bucket), value->count, value->sum_micros};
    loaded.emplace(key->bucket, s);
    return true;
  });
  if (!st.ok()) return st.error();
  if (bad) return *bad;
  return &cache_.emplace(std::string(task), std::move(loaded)).first->second;
}

result<insert_outcome> exemplar_store::insert(const exemplar_input& e) {
  auto r = insert_batch(std::span<const exemplar_input>(&e, 1));
  if (!r.ok()) return r.error();
  return r->front();
}

result<std::vector<insert_outcome>> exemplar_store::insert_batch(std::span<const exemplar_input> batch) {
  std::lock_guard lock(mu_);
  storage::write_batch wb;
  std::map<std::string, task_buckets, std::less<>> touched;  // working copies; committed after the write
  std::set<std::string> seen;                                  // exemplar keys in this batch
  std::vector<insert_outcome> outcomes;
  outcomes.reserve(batch.size());
  for (const auto& e : batch) {
    CRUCIBLE_TRY(validate_task(e.task));
    if (e.id.empty()) return make_error(errc::invalid_argument, "exemplar of task " + e.task + " has an empty id");
    auto bucket = bucketing_.bucket_of(e.score);
    if (!bucket.ok()) {
      return make_error(errc::invalid_argument, fmt::format("exemplar {} of task {}: {}", e.id, e.task, bucket.error().message));
    }
    std::string key = keys::exemplar_key(e.task, e.id);
    if (seen.count(key)) {
      outcomes.push_back(insert_outcome::duplicate);
      continue;
    }
    auto existing = kv_->get(family::exemplars, key);
    if (!existing.ok()) return existing.error();
    if (existing->has_value()) {
      outcomes.push_back(insert_outcome::duplicate);
      continue;
    }
    seen.insert(key);

    auto it = touched.find(e.task);
    if (it == touched.end()) {
      auto current = load(e.task);
      if (!current.ok()) return current.error();
      it = touched.emplace(e.task, **current).first;
    }
    auto& slot = it->second.try_emplace(*bucket, bucket_summary{*bucket, bucketing_.range(*bucket), 0, 0}).first->second;
    keys::record rec{keys::to_micros(e.score), e.score, *bucket, slot.count, e.code};
    slot.count += 1;
    slot.score_sum_micros += rec.score_micros;
    wb.put(family::exemplars, std::move(key), keys::encode(rec));
    wb.put(family::buckets, keys::index_key(e.task, *bucket, rec.ordinal), e.id);
    outcomes.push_back(insert_outcome::inserted);
  }
  for (const auto& [task, buckets] : touched)
    for (const auto& [b, s] : buckets) wb.put(family::buckets, keys::stats_key(task, b), keys::encode(keys::stats_value{s.count, s.score_sum_micros}));
  if (wb.empty()) return outcomes;
  CRUCIBLE_TRY(kv_->write(wb, options_.durability));
  for (auto& [task, buckets] : touched) cache_.insert_or_assign(task, std::move(buckets));
  return outcomes;
}

result<std::vector<exemplar>> exemplar_store::sample(std::string_view task, std::size_t n, double temperature,
                                                     rng& gen) {
  if (!(temperature > 0) || !std::isfinite(temperature))
    return make_error(errc::invalid_argument, fmt::format("temperature {} must be positive and finite", temperature));
  CRUCIBLE_TRY(validate_task(task));
  std::lock_guard lock(mu_);
  auto loaded = load(task);
  if (!loaded.ok()) return loaded.error();
  std::vector<bucket_stat> view;
  view.reserve((*loaded)->size());
  for (const auto& [b, s] : **loaded) view.push_back({b, s.count, s.mean()});
  std::vector<exemplar> out;
  for (const pick& p : selector_->choose(task, view, n, temperature, gen)) {
    const bucket_stat& b = view[p.bucket_index];
    auto id = kv_->get(family::buckets, keys::index_key(task, b.bucket, p.ordinal));
    if (!id.ok()) return id.error();
    if (!id->has_value())
      return make_error(errc::corrupt, fmt::format("{}: task {} bucket {} has no exemplar at ordinal {}",
                                                   kv_->describe(), task, b.bucket, p.ordinal));
    auto value = kv_->get(family::exemplars, keys::exemplar_key(task, **id));
    if (!value.ok()) return value.error();
    auto rec = value->has_value() ? keys::decode_record(**value) : std::nullopt;
    if (!rec)
      return make_error(errc::corrupt, fmt::format("{}: exemplar {} of task {} is missing or malformed",
                                                   kv_->describe(), **id, task));
    out.push_back(exemplar{std::string(task), std::move(**id), std::move(rec->code), rec->score, b.bucket, b.mean});
  }
  return out;
}

result<std::vector<bucket_summary>> exemplar_store::stats(std::string_view task) {
  CRUCIBLE_TRY(validate_task(task));
  std::lock_guard lock(mu_);
  auto loaded = load(task);
  if (!loaded.ok()) return loaded.error();
  std::vector<bucket_summary> out;
  for (const auto& [b, s] : **loaded) out.push_back(s);
  return out;
}

result<std::vector<bucket_summary>> exemplar_store::recount(std::string_view task) {
  CRUCIBLE_TRY(validate_task(task));
  task_buckets counted;
  std::optional<error> bad;
  status st = kv_->scan(family::exemplars, keys::exemplar_prefix(task), [&](std::string_view k, std::string_view v) {
    auto rec = keys::decode_record(v);
    if (!rec) {
      bad = make_error(errc::corrupt, fmt::format("{}: malformed exemplar record under key of task {}", kv_->describe(), task));
      return false;
    }
    auto& s = counted.try_emplace(rec->bucket, bucket_summary{rec->bucket, bucketing_.range(rec->bucket), 0, 0}).first->second;
    s.count += 1;
    s.score_sum_micros += rec->score_micros;
    (void)k;
    return true;
  });
  if (!st.ok()) return st.error();
  if (bad) return *bad;
  std::vector<bucket_summary> out;
  for (const auto& [b, s] : counted) out.push_back(s);
  return out;
}

result<std::vector<std::string>> exemplar_store::tasks() {
  std::vector<std::string> out;
  status st = kv_->scan(family::buckets, keys::all_stats_prefix, [&](std::string_view k, std::string_view) {
    auto key = keys::parse_stats_key(k);
    if (key && (out.empty() || out.back() != key->task)) out.push_back(key->task);
    return true;
  });
  if (!st.ok()) return st.error();
  return out;
}

std::string exemplar_store::describe() const {
  return fmt::format("exemplars({}, {}, {})", kv_->describe(), bucketing_.describe(), to_string(options_.selector));
}

}  // namespace crucible::exemplar
