// The exemplar store's on-disk layout (private to exemplar_store.cpp and its
// tests). All integers big-endian so that byte order is numeric order.
//
//   exemplars family:  task \0 id                        -> record
//   buckets family:    'S' task \0 bucket                -> count, score sum (micro-units)
//                      'I' task \0 bucket ordinal        -> id
//   meta family:       "exemplar/bucketing"              -> "linear:0.1"
//
// Score sums are kept in integer micro-units so that a recount in any order
// gives exactly the stored figure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crucible::exemplar::keys {

inline constexpr std::string_view bucketing_key = "exemplar/bucketing";

std::int64_t to_micros(double score);

std::string exemplar_key(std::string_view task, std::string_view id);
std::string exemplar_prefix(std::string_view task);  // task \0
std::string stats_prefix(std::string_view task);     // 'S' task \0
inline constexpr std::string_view all_stats_prefix = "S";
std::string stats_key(std::string_view task, std::int32_t bucket);
std::string index_key(std::string_view task, std::int32_t bucket, std::uint64_t ordinal);

struct record {
  std::int64_t score_micros = 0;
  double score = 0;
  std::int32_t bucket = 0;
  std::uint64_t ordinal = 0;
  std::string code;
};
std::string encode(const record& r);
std::optional<record> decode_record(std::string_view bytes);

struct stats_value {
  std::uint64_t count = 0;
  std::int64_t sum_micros = 0;
};
std::string encode(const stats_value& s);
std::optional<stats_value> decode_stats(std::string_view bytes);

// Splits a stats key into task and bucket; nullopt if malformed.
struct stats_key_parts {
  std::string task;
  std::int32_t bucket;
};
std::optional<stats_key_parts> parse_stats_key(std::string_view key);
// Splits an exemplar key into task and id.
struct exemplar_key_parts {
  std::string task;
  std::string id;
};
std::optional<exemplar_key_parts> parse_exemplar_key(std::string_view key);

}  // namespace crucible::exemplar::keys
