#include "actors/policy/pre_tokenizer.hpp"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "actors/policy/unicode.hpp"

namespace crucible::policy::detail {
namespace {

using json = nlohmann::json;

// Oniguruma's \s (as Hugging Face compiles it) is Unicode White_Space, which
// includes U+0085; PCRE2's \s under UCP does not. Adds it, inside and outside
// character classes.
std::string onig_compatible(std::string_view p) {
  std::string out;
  bool in_class = false;
  for (std::size_t i = 0; i < p.size();) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char d = p[i + 1];
      if (d == 's') {
        out += in_class ? "\\s\\x{85}" : "[\\s\\x{85}]";
      } else if (d == 'S' && !in_class) {
        out += "[^\\s\\x{85}]";
      } else {
        out += c;
        out += d;
      }
      i += 2;
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      ++i;
      if (i < p.size() && p[i] == '^') out += p[i++];
      if (i < p.size() && p[i] == ']') out += p[i++];  // a literal ] first in a class
      continue;
    }
    if (in_class && c == '[' && i + 1 < p.size() && p[i + 1] == ':') {
      auto close = p.find(":]", i + 2);
      if (close != std::string_view::npos) {
        out.append(p.substr(i, close + 2 - i));
        i = close + 2;
        continue;
      }
    }
    if (in_class && c == ']') in_class = false;
    out += c;
    ++i;
  }
  return out;
}

error bad(const std::string& source, const std::string& field, const std::string& what) {
  return make_error(errc::invalid_argument, source + ": field " + field + " " + what);
}

result<split_behavior> parse_behavior(const json& v, const std::string& source, const std::string& field) {
  if (!v.is_string()) return bad(source, field, "is not a string");
  const auto s = v.get<std::string>();
  if (s == "Removed") return split_behavior::removed;
  if (s == "Isolated") return split_behavior::isolated;
  if (s == "MergedWithPrevious") return split_behavior::merged_with_previous;
  if (s == "MergedWithNext") return split_behavior::merged_with_next;
  if (s == "Contiguous") return split_behavior::contiguous;
  return bad(source, field, "is \"" + s + "\", not a known split behavior");
}

bool flag(const json& spec, const char* key, bool fallback) {
  auto it = spec.find(key);
  return it == spec.end() || !it->is_boolean() ? fallback : it->get<bool>();
}

status add_steps(const json& spec, const std::string& source, const std::string& field,
                 std::vector<pre_tokenize_step>& steps) {
  if (spec.is_null()) return status::success();
  if (!spec.is_object() || !spec.contains("type") || !spec["type"].is_string()) {
    return bad(source, field, "is not an object with a \"type\"");
  }
  const auto type = spec["type"].get<std::string>();
  if (type == "Sequence") {
    auto list = spec.find("pretokenizers");
    if (list == spec.end() || !list->is_array()) return bad(source, field + ".pretokenizers", "is missing or not a list");
    for (std::size_t i = 0; i < list->size(); ++i) {
      CRUCIBLE_TRY(add_steps((*list)[i], source, field + ".pretokenizers[" + std::to_string(i) + "]", steps));
    }
    return status::success();
  }
  if (type == "ByteLevel") {
    steps.push_back(byte_level_step{flag(spec, "add_prefix_space", false), flag(spec, "use_regex", true)});
    return status::success();
  }
  if (type == "Split") {
    split_step step;
    auto pattern = spec.find("pattern");
    if (pattern == spec.end() || !pattern->is_object()) return bad(source, field + ".pattern", "is missing or not an object");
    if (pattern->contains("Regex") && (*pattern)["Regex"].is_string()) {
      auto re = regex::compile((*pattern)["Regex"].get<std::string>());
      if (!re) return bad(source, field + ".pattern.Regex", re.error().message);
      step.pattern = std::make_shared<const regex>(std::move(*re));
    } else if (pattern->contains("String") && (*pattern)["String"].is_string()) {
      step.literal = (*pattern)["String"].get<std::string>();
      if (step.literal.empty()) return bad(source, field + ".pattern.String", "is empty");
    } else {
      return bad(source, field + ".pattern", "holds neither a Regex nor a String");
    }
    auto behavior = spec.find("behavior");
    if (behavior == spec.end()) return bad(source, field + ".behavior", "is missing");
    auto parsed = parse_behavior(*behavior, source, field + ".behavior");
    if (!parsed) return parsed.error();
    step.behavior = *parsed;
    step.invert = flag(spec, "invert", false);
    steps.push_back(std::move(step));
    return status::success();
  }
  return bad(source, field + ".type", "is \"" + type + "\"; supported pre-tokenizers: ByteLevel, Split, Sequence");
}

// Matches of a literal, left to right, not overlapping.
std::vector<std::pair<std::size_t, std::size_t>> find_literal(std::string_view text, std::string_view literal) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t at = text.find(literal); at != std::string_view::npos; at = text.find(literal, at + literal.size())) {
    out.emplace_back(at, at + literal.size());
  }
  return out;
}

}  // namespace

result<regex> regex::compile(std::string_view pattern) {
  const std::string translated = onig_compatible(pattern);
  int code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* compiled = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(),
                                       PCRE2_UTF | PCRE2_UCP, &code, &offset, nullptr);
  if (!compiled) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(code, message, sizeof message);
    return make_error(errc::invalid_argument, "regex does not compile at offset " + std::to_string(offset) + ": " +
                                                  reinterpret_cast<const char*>(message));
  }
  pcre2_jit_compile(compiled, PCRE2_JIT_COMPLETE);  // falls back to the interpreter when JIT is unavailable
  regex re;
  re.code_ = std::shared_ptr<void>(compiled, [](void* p) { pcre2_code_free(static_cast<pcre2_code*>(p)); });
  return re;
}

std::vector<std::pair<std::size_t, std::size_t>> regex::find_all(std::string_view text) const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  // One JIT stack per thread, large enough for long whitespace runs.
  struct jit_context {
    pcre2_jit_stack* stack = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, nullptr);
    pcre2_match_context* context = pcre2_match_context_create(nullptr);
    jit_context() { pcre2_jit_stack_assign(context, nullptr, stack); }
    ~jit_context() {
      pcre2_match_context_free(context);
      pcre2_jit_stack_free(stack);
    }
  };
  thread_local jit_context jit;
  auto* code = static_cast<pcre2_code*>(code_.get());
  pcre2_match_data* md = pcre2_match_data_create_from_pattern(code, nullptr);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t at = 0;
  while (at <= text.size()) {
    // The text is valid UTF-8 (the tokenizer checks), so skip PCRE2's check.
    int rc = pcre2_match(code, subject, text.size(), at, PCRE2_NO_UTF_CHECK, md, jit.context);
    CRUCIBLE_CHECK(rc >= 0 || rc == PCRE2_ERROR_NOMATCH, "a pre-tokenizer regex ran out of match resources");
    if (rc < 0) break;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md);
    out.emplace_back(ov[0], ov[1]);
    if (ov[1] > ov[0]) {
      at = ov[1];
    } else {
      if (ov[1] >= text.size()) break;
      std::size_t len = 1;
      unicode::decode_at(text, ov[1], &len);
      at = ov[1] + len;
    }
  }
  pcre2_match_data_free(md);
  return out;
}

std::vector<std::string> split_pieces(const split_step& step, std::string_view text) {
  // (begin, end, is a match) covering the whole text, as tokenizers' find_matches.
  struct span {
    std::size_t begin, end;
    bool match;
  };
  std::vector<span> spans;
  if (text.empty()) {
    spans.push_back({0, 0, false});
  } else {
    auto matches = step.pattern ? step.pattern->find_all(text) : find_literal(text, step.literal);
    std::size_t prev = 0;
    for (auto [b, e] : matches) {
      if (prev != b) spans.push_back({prev, b, false});
      spans.push_back({b, e, true});
      prev = e;
    }
    if (prev != text.size()) spans.push_back({prev, text.size(), false});
  }
  if (step.invert)
    for (auto& s : spans) s.match = !s.match;

  // (begin, end, remove) after the behavior, as NormalizedString::split.
  struct cut {
    std::size_t begin, end;
    bool remove;
  };
  std::vector<cut> cuts;
  bool previous_match = false;
  switch (step.behavior) {
    case split_behavior::isolated:
      for (const auto& s : spans) cuts.push_back({s.begin, s.end, false});
      break;
    case split_behavior::removed:
      for (const auto& s : spans) cuts.push_back({s.begin, s.end, s.match});
      break;
    case split_behavior::contiguous:
      for (const auto& s : spans) {
        if (s.match == previous_match && !cuts.empty()) {
          cuts.back().end = s.end;
        } else {
          cuts.push_back({s.begin, s.end, false});
        }
        previous_match = s.match;
      }
      break;
    case split_behavior::merged_with_previous:
      for (const auto& s : spans) {
        if (s.match && !previous_match && !cuts.empty()) {
          cuts.back().end = s.end;
        } else {
          cuts.push_back({s.begin, s.end, false});
        }
        previous_match = s.match;
      }
      break;
    case split_behavior::merged_with_next:
      for (auto it = spans.rbegin(); it != spans.rend(); ++it) {
        if (it->match && !previous_match && !cuts.empty()) {
          cuts.back().begin = it->begin;
        } else {
          cuts.push_back({it->begin, it->end, false});
        }
        previous_match = it->match;
      }
      std::reverse(cuts.begin(), cuts.end());
      break;
  }
  std::vector<std::string> pieces;
  for (const auto& c : cuts)
    if (!c.remove && c.end > c.begin) pieces.emplace_back(text.substr(c.begin, c.end - c.begin));
  return pieces;
}

result<pre_tokenizer> pre_tokenizer::from_json(const json& spec, const std::string& source) {
  std::vector<pre_tokenize_step> steps;
  CRUCIBLE_TRY(add_steps(spec, source, "pre_tokenizer", steps));
  return from_steps(std::move(steps));
}

result<pre_tokenizer> pre_tokenizer::from_steps(std::vector<pre_tokenize_step> steps) {
  pre_tokenizer p;
  p.steps_ = std::move(steps);
  return p;
}

void pre_tokenizer::run(std::string_view text, std::vector<std::string>& out) const {
  static const split_step gpt2 = [] {
    split_step s;
    auto re = regex::compile(kGpt2Pattern);
    CRUCIBLE_CHECK(re.ok(), "the GPT-2 pattern compiles");
    s.pattern = std::make_shared<const regex>(std::move(*re));
    return s;
  }();
  std::vector<std::string> pieces;
  if (!text.empty()) pieces.emplace_back(text);
  for (const auto& step : steps_) {
    std::vector<std::string> next;
    for (const auto& piece : pieces) {
      if (const auto* split = std::get_if<split_step>(&step)) {
        for (auto& p : split_pieces(*split, piece)) next.push_back(std::move(p));
        continue;
      }
      const auto& byte_level = std::get<byte_level_step>(step);
      std::string prefixed = byte_level.add_prefix_space && piece.front() != ' ' ? " " + piece : piece;
      if (byte_level.use_regex) {
        for (auto& p : split_pieces(gpt2, prefixed)) next.push_back(unicode::bytes_to_printable(p));
      } else {
        next.push_back(unicode::bytes_to_printable(prefixed));
      }
    }
    pieces = std::move(next);
  }
  for (auto& p : pieces) out.push_back(std::move(p));
}

}  // namespace crucible::policy::detail
