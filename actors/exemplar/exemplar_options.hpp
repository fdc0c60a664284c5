// The one options struct of the exemplar role: bucketing, selector, defaults
// for queries. configs/*.toml map onto it; nothing reads global configuration.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "runtime/base/result.hpp"
#include "storage/kv_store.hpp"

namespace crucible::exemplar {

// How scores map to buckets (bucketing.hpp).
enum class bucket_scale : std::uint8_t {
  linear,       // bucket k = [k*width, (k+1)*width)
  logarithmic,  // bucket k = [exp(k*width), exp((k+1)*width)); scores must be > 0
};

// Which selector picks exemplars for a prompt (selector.hpp).
enum class selector_kind : std::uint8_t {
  bucket,   // the paper's Equation 1 over bucket means, N distinct buckets
  uniform,  // N distinct exemplars uniformly at random (the paper's ablation)
  island,   // Equation 1 within one island; migration strong -> weak
};

struct exemplar_options {
  // Bucket scale. Default: linear. Fixed when a database is first used: a
  // store reopened with another scale or width refuses to open.
  bucket_scale scale = bucket_scale::linear;
  // Bucket width Δs (score units when linear, natural-log units when
  // logarithmic). Default: 0.1.
  double bucket_width = 0.1;
  // Selector. Default: bucket (the paper's Equation 1).
  selector_kind selector = selector_kind::bucket;
  // Temperature τ of Equation 1 when a query gives none (<= 0). Default: 1.0.
  double temperature = 1.0;
  // Exemplars per prompt when a query gives none (0). Default: 2.
  std::uint32_t n = 2;
  // Islands of the island selector. Default: 4.
  std::uint32_t islands = 4;
  // Sample requests per task between migrations of the island selector.
  // Default: 100.
  std::uint64_t migration_interval = 100;
  // Exemplars copied from the strongest to the weakest island per migration.
  // Default: 1.
  std::uint32_t migrants = 1;
  // Seed of the actor's generator for queries that carry seed 0. Default: 1.
  std::uint64_t seed = 1;
  // Durability of inserts. Default: buffered (survives kill -9; synced also
  // survives power loss at the cost of an fsync per settlement).
  storage::durability durability = storage::durability::buffered;
  // How often the actor tries again an insert its storage refused (a full
  // disk); the settlement waits, unanswered, meanwhile. Default: 1000 ms.
  std::chrono::milliseconds storage_retry{1000};
  // How soon a task whose buckets an insert changed is published to whoever
  // listens (the dashboard; exemplar_actor.hpp): at most once an interval,
  // the tasks changed meanwhile together. Default: 1000 ms; > 0.
  std::chrono::milliseconds bucket_publish_interval{1000};
  // How often every task's buckets are published again (the first time one
  // publish interval after start), so that a listener that joins late or
  // missed an event learns them all. Default: 10000 ms; 0: only at start.
  std::chrono::milliseconds bucket_refresh_interval{10000};
};

// Checks ranges (width > 0 and finite, islands >= 1, ...). errc::invalid_argument.
status validate(const exemplar_options& o);

const char* to_string(bucket_scale s);
const char* to_string(selector_kind s);
result<bucket_scale> parse_bucket_scale(const std::string& text);    // "linear" | "log" | "logarithmic"
result<selector_kind> parse_selector_kind(const std::string& text);  // "bucket" | "uniform" | "island"

}  // namespace crucible::exemplar
