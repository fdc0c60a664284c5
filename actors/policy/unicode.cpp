#include "actors/policy/unicode.hpp"

#include <utf8proc.h>

#include <cstdlib>
#include <unordered_map>

namespace crucible::policy::unicode {
namespace {

// Length of the sequence a lead byte starts, and the valid range of the
// second byte (the later ones are always 80..BF): Unicode table 3-7.
struct lead_info {
  int length;
  std::uint8_t lo, hi;
};

lead_info lead(std::uint8_t b) {
  if (b < 0x80) return {1, 0, 0};
  if (b >= 0xC2 && b <= 0xDF) return {2, 0x80, 0xBF};
  if (b == 0xE0) return {3, 0xA0, 0xBF};
  if ((b >= 0xE1 && b <= 0xEC) || b == 0xEE || b == 0xEF) return {3, 0x80, 0xBF};
  if (b == 0xED) return {3, 0x80, 0x9F};
  if (b == 0xF0) return {4, 0x90, 0xBF};
  if (b >= 0xF1 && b <= 0xF3) return {4, 0x80, 0xBF};
  if (b == 0xF4) return {4, 0x80, 0x8F};
  return {0, 0, 0};
}

// Bytes of the valid sequence at s[i], or -(bytes of the maximal invalid
// prefix, at least 1).
int sequence_at(std::string_view s, std::size_t i) {
  const auto b = static_cast<std::uint8_t>(s[i]);
  const lead_info info = lead(b);
  if (info.length == 1) return 1;
  if (info.length == 0) return -1;
  for (int k = 1; k < info.length; ++k) {
    if (i + k >= s.size()) return -k;
    const auto c = static_cast<std::uint8_t>(s[i + k]);
    const std::uint8_t lo = k == 1 ? info.lo : 0x80, hi = k == 1 ? info.hi : 0xBF;
    if (c < lo || c > hi) return -k;
  }
  return info.length;
}

}  // namespace

bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    int n = sequence_at(s, i);
    if (n < 0) return false;
    i += static_cast<std::size_t>(n);
  }
  return true;
}

char32_t decode_at(std::string_view s, std::size_t i, std::size_t* length) {
  const auto b = static_cast<std::uint8_t>(s[i]);
  int n = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
  if (i + static_cast<std::size_t>(n) > s.size()) n = 1;  // not valid UTF-8; callers validate first
  char32_t cp = n == 1 ? b : n == 2 ? (b & 0x1F) : n == 3 ? (b & 0x0F) : (b & 0x07);
  for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<std::uint8_t>(s[i + k]) & 0x3F);
  if (length) *length = static_cast<std::size_t>(n);
  return cp;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

std::string from_utf8_lossy(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (std::size_t i = 0; i < bytes.size();) {
    int n = sequence_at(bytes, i);
    if (n > 0) {
      out.append(bytes.substr(i, static_cast<std::size_t>(n)));
      i += static_cast<std::size_t>(n);
    } else {
      out += "\xEF\xBF\xBD";
      i += static_cast<std::size_t>(-n);
    }
  }
  return out;
}

std::string normalize(std::string_view s, normal_form form) {
  if (s.empty()) return {};
  int options = UTF8PROC_STABLE;
  switch (form) {
    case normal_form::nfc: options |= UTF8PROC_COMPOSE; break;
    case normal_form::nfd: options |= UTF8PROC_DECOMPOSE; break;
    case normal_form::nfkc: options |= UTF8PROC_COMPOSE | UTF8PROC_COMPAT; break;
    case normal_form::nfkd: options |= UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT; break;
  }
  utf8proc_uint8_t* out = nullptr;
  utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(s.data()),
                                    static_cast<utf8proc_ssize_t>(s.size()), &out,
                                    static_cast<utf8proc_option_t>(options));
  if (n < 0) return std::string(s);  // invalid UTF-8: callers validate first
  std::string result(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
  std::free(out);
  return result;
}

bool is_whitespace(char32_t cp) {
  switch (cp) {
    case 0x09: case 0x0A: case 0x0B: case 0x0C: case 0x0D: case 0x20: case 0x85: case 0xA0:
    case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F: case 0x3000:
      return true;
    default:
      return cp >= 0x2000 && cp <= 0x200A;
  }
}

bool is_word_char(char32_t cp) {
  if (cp == 0x200C || cp == 0x200D) return true;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(cp))) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_PC:
      return true;
    default:
      return false;
  }
}

const std::array<char32_t, 256>& byte_to_char() {
  static const std::array<char32_t, 256> table = [] {
    std::array<char32_t, 256> t{};
    char32_t next = 256;
    for (int b = 0; b < 256; ++b) {
      const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
      t[b] = printable ? static_cast<char32_t>(b) : next++;
    }
    return t;
  }();
  return table;
}

std::optional<std::uint8_t> char_to_byte(char32_t cp) {
  static const std::unordered_map<char32_t, std::uint8_t> inverse = [] {
    std::unordered_map<char32_t, std::uint8_t> m;
    for (int b = 0; b < 256; ++b) m.emplace(byte_to_char()[b], static_cast<std::uint8_t>(b));
    return m;
  }();
  auto it = inverse.find(cp);
  if (it == inverse.end()) return std::nullopt;
  return it->second;
}

std::string bytes_to_printable(std::string_view s) {
  static const std::array<std::string, 256> encoded = [] {
    std::array<std::string, 256> e;
    for (int b = 0; b < 256; ++b) append_utf8(e[b], byte_to_char()[b]);
    return e;
  }();
  std::string out;
  out.reserve(s.size() * 2);
  for (char c : s) out += encoded[static_cast<std::uint8_t>(c)];
  return out;
}

}  // namespace crucible::policy::unicode
