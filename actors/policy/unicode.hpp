// UTF-8 and Unicode helpers for the tokenizer: validation, Rust-compatible
// lossy decoding, normalization forms (utf8proc), the character classes that
// Hugging Face tokenizers tests, and GPT-2's byte <-> printable character map.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace crucible::policy::unicode {

// True when `s` is well-formed UTF-8 (no surrogates, no overlongs).
bool valid_utf8(std::string_view s);

// The code point starting at s[i] (s must be valid UTF-8) and its length.
char32_t decode_at(std::string_view s, std::size_t i, std::size_t* length);
void append_utf8(std::string& out, char32_t cp);

// Like Rust's String::from_utf8_lossy: each maximal invalid subsequence
// becomes one U+FFFD.
std::string from_utf8_lossy(std::string_view bytes);

enum class normal_form { nfc, nfd, nfkc, nfkd };
// `s` must be valid UTF-8; embedded NULs are kept.
std::string normalize(std::string_view s, normal_form form);

// Rust's char::is_whitespace (the White_Space property).
bool is_whitespace(char32_t cp);
// The regex crate's \w: alphabetic, marks, decimal digits, connector
// punctuation, joiners.
bool is_word_char(char32_t cp);

// GPT-2's bytes_to_unicode: byte b <-> a printable code point.
const std::array<char32_t, 256>& byte_to_char();
// The byte of a printable code point, or nullopt when it maps from no byte.
std::optional<std::uint8_t> char_to_byte(char32_t cp);
// Each byte of `s` as its printable code point, UTF-8 encoded.
std::string bytes_to_printable(std::string_view s);

}  // namespace crucible::policy::unicode
