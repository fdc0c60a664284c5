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
  // Puts collected per family and written in key order (keys within one batch
  // are distinct). Statistics are updated in the cache in place and put back
  // from `undo` if the write fails.
  std::map<std::string, std::string> exemplar_puts, bucket_puts;
  struct change {
    task_buckets* buckets;
    std::string task;
    std::int32_t bucket;
    std::optional<bucket_summary> before;  // nullopt: the bucket was new
  };
  std::vector<change> undo;
  std::vector<insert_outcome> outcomes;
  outcomes.reserve(batch.size());
  auto rollback = [&] {
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
      if (it->before) (*it->buckets)[it->bucket] = *it->before;
      else it->buckets->erase(it->bucket);
    }
  };
  for (const auto& e : batch) {
    status valid = validate_task(e.task);
    if (valid.ok() && e.id.empty()) valid = make_error(errc::invalid_argument, "exemplar of task " + e.task + " has an empty id");
    auto bucket = bucketing_.bucket_of(e.score);
    if (valid.ok() && !bucket.ok())
      valid = make_error(errc::invalid_argument, fmt::format("exemplar {} of task {}: {}", e.id, e.task, bucket.error().message));
    if (!valid.ok()) {
      rollback();
      return valid.error();
    }
    std::string key = keys::exemplar_key(e.task, e.id);
    if (exemplar_puts.count(key)) {
      outcomes.push_back(insert_outcome::duplicate);
      continue;
    }
    auto existing = kv_->get(family::exemplars, key);
    auto buckets = existing.ok() ? load(e.task) : result<task_buckets*>(existing.error());
    if (!existing.ok() || !buckets.ok()) {
      rollback();
      return existing.ok() ? buckets.error() : existing.error();
    }
    if (existing->has_value()) {
      outcomes.push_back(insert_outcome::duplicate);
      continue;
    }
    auto [slot, fresh] = (*buckets)->try_emplace(*bucket, bucket_summary{*bucket, bucketing_.range(*bucket), 0, 0});
    undo.push_back({*buckets, e.task, *bucket, fresh ? std::nullopt : std::optional<bucket_summary>(slot->second)});
    keys::record rec{keys::to_micros(e.score), e.score, *bucket, slot->second.count, e.code};
    slot->second.count += 1;
    slot->second.score_sum_micros += rec.score_micros;
    exemplar_puts.emplace(std::move(key), keys::encode(rec));
    bucket_puts.emplace(keys::index_key(e.task, *bucket, rec.ordinal), e.id);
    outcomes.push_back(insert_outcome::inserted);
  }
  if (exemplar_puts.empty()) return outcomes;
  for (const auto& c : undo) {
    const bucket_summary& s = c.buckets->at(c.bucket);
    bucket_puts.insert_or_assign(keys::stats_key(c.task, c.bucket),
                                 keys::encode(keys::stats_value{s.count, s.score_sum_micros}));
  }
  storage::write_batch wb;
  for (auto& [k, v] : exemplar_puts) wb.put(family::exemplars, k, std::move(v));
  for (auto& [k, v] : bucket_puts) wb.put(family::buckets, k, std::move(v));
  if (status st = kv_->write(wb, options_.durability); !st.ok()) {
    rollback();
    return st.error();
  }
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
