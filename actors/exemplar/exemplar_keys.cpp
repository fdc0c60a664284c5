#include "actors/exemplar/exemplar_keys.hpp"

#include <bit>
#include <cmath>
#include <cstring>

namespace crucible::exemplar::keys {
namespace {

void put_u64(std::string& out, std::uint64_t v) {
  for (int s = 56; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
}
void put_u32(std::string& out, std::uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<char>((v >> s) & 0xff));
}
std::uint64_t get_u64(std::string_view in) {
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}
std::uint32_t get_u32(std::string_view in) {
  std::uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}
// Signed buckets sort numerically once the sign bit is flipped.
void put_bucket(std::string& out, std::int32_t b) { put_u32(out, static_cast<std::uint32_t>(b) ^ 0x80000000u); }
std::int32_t get_bucket(std::string_view in) { return static_cast<std::int32_t>(get_u32(in) ^ 0x80000000u); }

}  // namespace

std::int64_t to_micros(double score) { return std::llround(score * 1e6); }

std::string exemplar_prefix(std::string_view task) {
  std::string k(task);
  k.push_back('\0');
  return k;
}
std::string exemplar_key(std::string_view task, std::string_view id) { return exemplar_prefix(task).append(id); }
std::string stats_prefix(std::string_view task) { return "S" + exemplar_prefix(task); }
std::string stats_key(std::string_view task, std::int32_t bucket) {
  std::string k = stats_prefix(task);
  put_bucket(k, bucket);
  return k;
}
std::string index_key(std::string_view task, std::int32_t bucket, std::uint64_t ordinal) {
  std::string k = "I" + exemplar_prefix(task);
  put_bucket(k, bucket);
  put_u64(k, ordinal);
  return k;
}

std::string encode(const record& r) {
  std::string out;
  out.reserve(28 + r.code.size());
  put_u64(out, static_cast<std::uint64_t>(r.score_micros));
  put_u64(out, std::bit_cast<std::uint64_t>(r.score));
  put_bucket(out, r.bucket);
  put_u64(out, r.ordinal);
  out.append(r.code);
  return out;
}

std::optional<record> decode_record(std::string_view in) {
  if (in.size() < 28) return std::nullopt;
  record r;
  r.score_micros = static_cast<std::int64_t>(get_u64(in));
  r.score = std::bit_cast<double>(get_u64(in.substr(8)));
  r.bucket = get_bucket(in.substr(16));
  r.ordinal = get_u64(in.substr(20));
  r.code.assign(in.substr(28));
  return r;
}

std::string encode(const stats_value& s) {
  std::string out;
  put_u64(out, s.count);
  put_u64(out, static_cast<std::uint64_t>(s.sum_micros));
  return out;
}

std::optional<stats_value> decode_stats(std::string_view in) {
  if (in.size() != 16) return std::nullopt;
  return stats_value{get_u64(in), static_cast<std::int64_t>(get_u64(in.substr(8)))};
}

std::optional<stats_key_parts> parse_stats_key(std::string_view key) {
  if (key.size() < 6 || key[0] != 'S' || key[key.size() - 5] != '\0') return std::nullopt;
  return stats_key_parts{std::string(key.substr(1, key.size() - 6)), get_bucket(key.substr(key.size() - 4))};
}

std::optional<exemplar_key_parts> parse_exemplar_key(std::string_view key) {
  auto z = key.find('\0');
  if (z == std::string_view::npos) return std::nullopt;
  return exemplar_key_parts{std::string(key.substr(0, z)), std::string(key.substr(z + 1))};
}

}  // namespace crucible::exemplar::keys
