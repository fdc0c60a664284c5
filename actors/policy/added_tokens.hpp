// Added and special tokens of tokenizer.json ("added_tokens"): found in the
// text before pre-tokenization, as tokenizers' AddedVocabulary does
// (leftmost-longest matching; single_word, lstrip, rstrip). Used only by
// tokenizer.cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace crucible::policy::detail {

struct added_token {
  std::int32_t id = 0;
  std::string content;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = true;
  bool special = false;
};

// A piece of text and, when it is an added token, that token's id.
struct text_piece {
  std::string text;
  std::optional<std::int32_t> token;
};

// The patterns of one matching pass (non-normalized tokens against the raw
// text, or normalized tokens against the normalized text).
class added_token_matcher {
 public:
  struct pattern {
    std::string text;  // the content (normalized for the normalized pass)
    const added_token* token;
  };
  added_token_matcher() = default;
  explicit added_token_matcher(std::vector<pattern> patterns);

  // Splits `sentence` into non-empty pieces, the added tokens among them
  // carrying their id (tokenizers' find_matches + split_with_indices).
  void split(std::string_view sentence, std::vector<text_piece>& out) const;
  bool empty() const { return patterns_.empty(); }

 private:
  std::vector<pattern> patterns_;
  std::vector<std::vector<std::size_t>> by_first_byte_;  // pattern indices, longest first
};

}  // namespace crucible::policy::detail
