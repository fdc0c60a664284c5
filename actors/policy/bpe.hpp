// The byte-pair-encoding model of tokenizer.json ("model": {"type": "BPE"}):
// a vocabulary, ranked merges, and the options Hugging Face's BPE has
// (unk_token, fuse_unk, byte_fallback, continuing_subword_prefix,
// end_of_word_suffix, ignore_merges). Turns one pre-tokenized piece into ids
// exactly as tokenizers' BPE::tokenize does. Used only by tokenizer.cpp.
#pragma once

#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "runtime/base/result.hpp"

namespace crucible::policy::detail {

class bpe_model {
 public:
  // From tokenizer.json's "model". invalid_argument naming `source` and the
  // field for another model type, dropout, a merge that is not two tokens, or
  // a merge naming a token the vocabulary lacks.
  static result<bpe_model> from_json(const nlohmann::json& spec, const std::string& source);

  bpe_model() = default;
  bpe_model(bpe_model&& other) noexcept;
  bpe_model& operator=(bpe_model&&) = delete;

  // Appends the ids of one piece to `out`. Characters that have no token (and
  // no unk_token or byte fallback) are dropped, as tokenizers drops them.
  // Thread-safe: the cache is guarded by cache_mutex_.
  void tokenize(std::string_view piece, std::vector<std::int32_t>& out) const;

  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  const std::string* id_to_token(std::int32_t id) const;
  std::size_t vocab_size() const { return vocab_.size(); }

 private:
  struct merge {
    std::uint32_t rank;
    std::int32_t new_id;
  };
  static std::uint64_t pair_key(std::int32_t a, std::int32_t b) {
    return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(a)) << 32) | static_cast<std::uint32_t>(b);
  }
  std::vector<std::int32_t> merge_word(std::string_view piece) const;

  std::unordered_map<std::string, std::int32_t> vocab_;
  std::unordered_map<std::int32_t, std::string> vocab_r_;
  std::unordered_map<std::uint64_t, merge> merges_;
  std::optional<std::string> unk_token_;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;

  static constexpr std::size_t kCacheCapacity = 10000;  // as tokenizers' DEFAULT_CACHE_CAPACITY
  static constexpr std::size_t kCacheMaxPieceBytes = 256;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<std::int32_t>> cache_;  // GUARDED_BY(cache_mutex_)
};

}  // namespace crucible::policy::detail
