#include "storage/crc32c.hpp"

#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

namespace crucible::storage {
namespace {

constexpr std::uint32_t poly = 0x82F63B78u;  // reflected Castagnoli polynomial

std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> t{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ poly : c >> 1;
    t[i] = c;
  }
  return t;
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) std::uint32_t crc32c_sse42(std::uint32_t crc, const void* data, std::size_t size) {
  auto* p = static_cast<const unsigned char*>(data);
  std::uint64_t c = ~crc;
  for (; size >= 8; size -= 8, p += 8) {
    std::uint64_t w;
    std::memcpy(&w, p, 8);
    c = _mm_crc32_u64(c, w);
  }
  auto c32 = static_cast<std::uint32_t>(c);
  for (; size > 0; --size, ++p) c32 = _mm_crc32_u8(c32, *p);
  return ~c32;
}
#endif

}  // namespace

std::uint32_t crc32c_portable(std::uint32_t crc, const void* data, std::size_t size) {
  static const auto table = make_table();
  auto* p = static_cast<const unsigned char*>(data);
  std::uint32_t c = ~crc;
  for (; size > 0; --size, ++p) c = table[(c ^ *p) & 0xffu] ^ (c >> 8);
  return ~c;
}

bool crc32c_hardware() {
#if defined(__x86_64__)
  static const bool has = __builtin_cpu_supports("sse4.2");
  return has;
#else
  return false;
#endif
}

std::uint32_t crc32c(std::uint32_t crc, const void* data, std::size_t size) {
#if defined(__x86_64__)
  if (crc32c_hardware()) return crc32c_sse42(crc, data, size);
#endif
  return crc32c_portable(crc, data, size);
}

}  // namespace crucible::storage
