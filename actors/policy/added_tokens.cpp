#include "actors/policy/added_tokens.hpp"

#include <algorithm>

#include "actors/policy/unicode.hpp"

namespace crucible::policy::detail {
namespace {

char32_t last_char(std::string_view s) {
  std::size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return unicode::decode_at(s, i, nullptr);
}

// tokenizers' ends_with_word / starts_with_word: the regex crate's \w.
bool ends_with_word(std::string_view s) { return !s.empty() && unicode::is_word_char(last_char(s)); }
bool starts_with_word(std::string_view s) { return !s.empty() && unicode::is_word_char(unicode::decode_at(s, 0, nullptr)); }

// Start of the whitespace run ending `s` (tokenizers' space_leftmost_at_end).
std::size_t trailing_space_start(std::string_view s) {
  std::size_t start = s.size();
  while (start > 0) {
    std::size_t i = start - 1;
    while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
    if (!unicode::is_whitespace(unicode::decode_at(s, i, nullptr))) break;
    start = i;
  }
  return start;
}

// Length of the whitespace run starting `s` (space_rightmost_at_start).
std::size_t leading_space_length(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    std::size_t len = 1;
    if (!unicode::is_whitespace(unicode::decode_at(s, i, &len))) break;
    i += len;
  }
  return i;
}

}  // namespace

added_token_matcher::added_token_matcher(std::vector<pattern> patterns) : patterns_(std::move(patterns)) {
  by_first_byte_.resize(256);
  for (std::size_t i = 0; i < patterns_.size(); ++i) {
    if (patterns_[i].text.empty()) continue;
    by_first_byte_[static_cast<unsigned char>(patterns_[i].text[0])].push_back(i);
  }
  for (auto& list : by_first_byte_) {
    std::stable_sort(list.begin(), list.end(),
                     [&](std::size_t a, std::size_t b) { return patterns_[a].text.size() > patterns_[b].text.size(); });
  }
}

void added_token_matcher::split(std::string_view sentence, std::vector<text_piece>& out) const {
  if (sentence.empty()) return;
  if (patterns_.empty()) {
    out.push_back({std::string(sentence), std::nullopt});
    return;
  }
  // Leftmost-longest, non-overlapping matches (aho-corasick's find_iter).
  struct found {
    std::size_t begin, end;
    const added_token* token;
  };
  std::vector<found> matches;
  for (std::size_t at = 0; at < sentence.size();) {
    const pattern* hit = nullptr;
    for (std::size_t i : by_first_byte_[static_cast<unsigned char>(sentence[at])]) {
      if (sentence.substr(at).starts_with(patterns_[i].text)) {
        hit = &patterns_[i];
        break;
      }
    }
    if (!hit) {
      ++at;
      continue;
    }
    matches.push_back({at, at + hit->text.size(), hit->token});
    at += hit->text.size();
  }

  std::size_t start_offset = 0;
  for (const auto& m : matches) {
    std::size_t start = m.begin, stop = m.end;
    if (m.token->single_word) {
      const bool start_space = start == 0 || !ends_with_word(sentence.substr(0, start));
      const bool stop_space = stop == sentence.size() || !starts_with_word(sentence.substr(stop));
      if (!start_space || !stop_space) continue;
    }
    if (m.token->lstrip) start = std::max(trailing_space_start(sentence.substr(0, start)), start_offset);
    if (m.token->rstrip) stop += leading_space_length(sentence.substr(stop));
    if (start_offset < start) out.push_back({std::string(sentence.substr(start_offset, start - start_offset)), std::nullopt});
    // tokenizers slices (start, stop) even when an rstrip overran this match.
    if (stop > start) out.push_back({std::string(sentence.substr(start, stop - start)), m.token->id});
    start_offset = stop;
  }
  if (start_offset < sentence.size()) out.push_back({std::string(sentence.substr(start_offset)), std::nullopt});
}

}  // namespace crucible::policy::detail
