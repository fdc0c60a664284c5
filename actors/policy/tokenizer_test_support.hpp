// Hand-made tokenizer.json documents for the tokenizer tests: a byte-level
// BPE whose first 256 ids are the 256 bytes (id == byte value) and whose
// merges add ids 256, 257, ... in order.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "actors/policy/unicode.hpp"

namespace crucible::policy::testing {

inline constexpr const char* kQwen2Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

// The printable form of a byte string ("Ġ" for a space, ...).
inline std::string printable(const std::string& bytes) { return unicode::bytes_to_printable(bytes); }

// merges are given as byte strings ("a", "b"); legacy_merges picks "a b" text.
inline nlohmann::json byte_level_tokenizer(const std::vector<std::pair<std::string, std::string>>& merges,
                                           bool legacy_merges = false) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[printable(std::string(1, static_cast<char>(b)))] = b;
  nlohmann::json merge_list = nlohmann::json::array();
  int next = 256;
  for (const auto& [a, b] : merges) {
    const auto pa = printable(a), pb = printable(b);
    if (!vocab.contains(pa + pb)) vocab[pa + pb] = next++;
    if (legacy_merges) merge_list.push_back(pa + " " + pb);
    else merge_list.push_back({pa, pb});
  }
  return {
      {"version", "1.0"},
      {"truncation", nullptr},
      {"padding", nullptr},
      {"added_tokens", nlohmann::json::array()},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
      {"post_processor", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", false}, {"use_regex", true}}},
      {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"trim_offsets", true}, {"use_regex", true}}},
      {"model",
       {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", nullptr},
        {"end_of_word_suffix", nullptr}, {"fuse_unk", false}, {"byte_fallback", false}, {"vocab", vocab},
        {"merges", merge_list}}},
  };
}

// Qwen2's pipeline: NFC, Split with its pattern, ByteLevel without a regex.
inline nlohmann::json qwen2_style(nlohmann::json j) {
  j["normalizer"] = {{"type", "NFC"}};
  j["pre_tokenizer"] = {
      {"type", "Sequence"},
      {"pretokenizers",
       {{{"type", "Split"}, {"pattern", {{"Regex", kQwen2Pattern}}}, {"behavior", "Isolated"}, {"invert", false}},
        {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", false}, {"use_regex", false}}}}};
  return j;
}

inline nlohmann::json added(int id, const std::string& content, bool special, bool normalized = false,
                            bool lstrip = false, bool rstrip = false, bool single_word = false) {
  return {{"id", id}, {"content", content}, {"single_word", single_word}, {"lstrip", lstrip},
          {"rstrip", rstrip}, {"normalized", normalized}, {"special", special}};
}

}  // namespace crucible::policy::testing
