// The exemplar store: scored, settled, clean candidates per task, with a
// bucket index kept incrementally so that sampling never scans exemplars.
//
// Each insert is one atomic batch of three writes (the exemplar, its slot in
// its bucket's index, the bucket's count and score sum), so the statistics
// equal a recount of the exemplars after any crash, kill -9 included.
// Inserts are idempotent by id (the candidate id): a second insert of an id
// already stored for the task changes nothing.
//
// Who calls it: the exemplar actor (exemplar_actor.hpp), the `crucible
// exemplars` command and the benchmark. Thread-safe (mu_ serializes inserts
// and samples). It shares ownership of the kv_store it writes through.
// Errors: errc::invalid_argument (bad task, id or score), errc::io and
// errc::corrupt from storage, with the store's path in the message.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "actors/exemplar/bucketing.hpp"
#include "actors/exemplar/exemplar_options.hpp"
#include "actors/exemplar/selector.hpp"
#include "runtime/base/result.hpp"
#include "storage/kv_store.hpp"

namespace crucible::exemplar {

// What goes in: a settled clean success (or a seed from a file).
struct exemplar_input {
  std::string task;  // non-empty, no NUL byte
  std::string id;    // the candidate id; non-empty
  std::string code;
  double score = 0;  // the settled reward (rounded speedup); finite
};

// What comes out of sample().
struct exemplar {
  std::string task;
  std::string id;
  std::string code;
  double score = 0;
  std::int32_t bucket = 0;
  double bucket_mean = 0;
};

// One non-empty bucket of a task.
struct bucket_summary {
  std::int32_t bucket = 0;
  bucket_range range{};
  std::uint64_t count = 0;
  std::int64_t score_sum_micros = 0;  // exact sum of scores in millionths
  double mean() const { return count ? static_cast<double>(score_sum_micros) / 1e6 / count : 0.0; }
  bool operator==(const bucket_summary& o) const {
    return bucket == o.bucket && count == o.count && score_sum_micros == o.score_sum_micros;
  }
};

enum class insert_outcome : std::uint8_t { inserted, duplicate };
const char* to_string(insert_outcome o);

class exemplar_store {
 public:
  // Opens the store on kv. The first open records the bucketing in the meta
  // family; a later open with another bucketing fails (errc::invalid_argument).
  static result<std::unique_ptr<exemplar_store>> open(std::shared_ptr<storage::kv_store> kv,
                                                       exemplar_options options = {});

  // Inserts one exemplar; duplicate when the id is already stored for the task.
  result<insert_outcome> insert(const exemplar_input& e);
  // Inserts many in one atomic batch (ids repeated inside the batch count once).
  result<std::vector<insert_outcome>> insert_batch(std::span<const exemplar_input> batch);

  // Up to n exemplars of task chosen by the configured selector with
  // temperature τ > 0; fewer when the task has fewer buckets (bucket,
  // island) or exemplars (uniform); none for an unknown task.
  result<std::vector<exemplar>> sample(std::string_view task, std::size_t n, double temperature, rng& gen);

  // The task's non-empty buckets by bucket number, from the incremental
  // statistics (no scan of exemplars).
  result<std::vector<bucket_summary>> stats(std::string_view task);
  // The same figures recomputed from the exemplars themselves (a full scan of
  // the task); for checks after a crash and for tests.
  result<std::vector<bucket_summary>> recount(std::string_view task);
  // Every task that has exemplars, in key order.
  result<std::vector<std::string>> tasks();

  const bucketing& buckets() const { return bucketing_; }
  const exemplar_options& options() const { return options_; }
  // "exemplars(rocksdb:/run/db, linear:0.1, bucket)".
  std::string describe() const;

 private:
  exemplar_store(std::shared_ptr<storage::kv_store> kv, exemplar_options options);
  using task_buckets = std::map<std::int32_t, bucket_summary>;
  result<task_buckets*> load(std::string_view task);  // REQUIRES(mu_)

  std::shared_ptr<storage::kv_store> kv_;
  exemplar_options options_;
  bucketing bucketing_;
  std::mutex mu_;
  std::unique_ptr<selector> selector_;                  // GUARDED_BY(mu_)
  std::map<std::string, task_buckets, std::less<>> cache_;  // GUARDED_BY(mu_); tasks loaded so far
};

// Checks a task id: non-empty, no NUL byte. errc::invalid_argument.
status validate_task(std::string_view task);

}  // namespace crucible::exemplar
