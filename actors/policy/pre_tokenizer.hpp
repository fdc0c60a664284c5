// Pre-tokenization as Hugging Face tokenizers does it: a text piece is cut
// into smaller pieces (by a regex or a literal, with a split behavior) and
// mapped to GPT-2's printable byte characters (ByteLevel). Built from the
// "pre_tokenizer" field of tokenizer.json; used only by tokenizer.cpp.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "runtime/base/result.hpp"

namespace crucible::policy::detail {

// A PCRE2 pattern compiled with UTF and UCP, made to match as Oniguruma does
// in Hugging Face tokenizers (\s also matches U+0085). Thread-safe to use.
class regex {
 public:
  // invalid_argument with PCRE2's message and offset when it does not compile.
  static result<regex> compile(std::string_view pattern);
  // Non-overlapping matches (begin, end) in byte offsets, left to right; an
  // empty match moves the search on by one character.
  std::vector<std::pair<std::size_t, std::size_t>> find_all(std::string_view text) const;

 private:
  std::shared_ptr<void> code_;  // pcre2_code_8
};

// The pattern GPT-2 and the ByteLevel pre-tokenizer split with.
inline constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

enum class split_behavior { removed, isolated, merged_with_previous, merged_with_next, contiguous };

// "Split": cut at matches of a regex (or a literal string).
struct split_step {
  std::shared_ptr<const regex> pattern;  // null for a literal
  std::string literal;
  split_behavior behavior = split_behavior::isolated;
  bool invert = false;
};

// "ByteLevel": optional leading space, the GPT-2 split, bytes to printable characters.
struct byte_level_step {
  bool add_prefix_space = false;
  bool use_regex = true;
};

using pre_tokenize_step = std::variant<split_step, byte_level_step>;

class pre_tokenizer {
 public:
  // From tokenizer.json's "pre_tokenizer" (null, ByteLevel, Split or a
  // Sequence of those). invalid_argument naming `source` and the field for
  // anything else.
  static result<pre_tokenizer> from_json(const nlohmann::json& spec, const std::string& source);
  static result<pre_tokenizer> from_steps(std::vector<pre_tokenize_step> steps);

  // Appends the pieces of `text` (never empty ones) to `out`.
  void run(std::string_view text, std::vector<std::string>& out) const;

 private:
  std::vector<pre_tokenize_step> steps_;
};

// The pieces of `text` under one split step (exposed for tests).
std::vector<std::string> split_pieces(const split_step& step, std::string_view text);

}  // namespace crucible::policy::detail
