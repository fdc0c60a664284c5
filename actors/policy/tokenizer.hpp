// The policy's tokenizer: reads a Hugging Face tokenizer.json with a
// byte-level BPE model and encodes and decodes exactly as the `tokenizers`
// library does (same ids, same text). Supported: normalizers NFC/NFD/NFKC/NFKD
// (alone or in a Sequence, or none); pre-tokenizers ByteLevel and Split (or a
// Sequence of them); added and special tokens; post-processors ByteLevel and
// TemplateProcessing; decoder ByteLevel. Anything else is refused at load time
// with an error naming the file and the field.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/base/result.hpp"

namespace crucible::policy {

struct encode_options {
  // Apply the post-processor's template (e.g. a leading <|begin_of_text|>);
  // default true, as tokenizers' encode and transformers' __call__.
  bool add_special_tokens = true;
};

struct decode_options {
  // Leave special tokens out of the text; default false, as transformers'
  // decode (the `tokenizers` Python binding defaults to true).
  bool skip_special_tokens = false;
};

// Immutable after load and cheap to copy (copies share the state). Every
// method is thread-safe; the BPE cache inside is guarded by a mutex.
class tokenizer {
 public:
  // Reads `path`: a tokenizer.json file, or a folder holding one. not_found
  // or io when unreadable; invalid_argument naming the file and field for
  // bad JSON or an unsupported model, normalizer, pre-tokenizer,
  // post-processor, decoder, truncation or padding.
  static result<tokenizer> load(const std::filesystem::path& path);
  // The same from JSON text; `source` names it in errors.
  static result<tokenizer> parse(std::string_view json_text, const std::string& source);

  // Token ids of `text`. invalid_argument when `text` is not valid UTF-8.
  result<std::vector<std::int32_t>> encode(std::string_view text, const encode_options& options = {}) const;
  // Text of `ids`; ids the vocabulary lacks are skipped, invalid UTF-8 becomes U+FFFD.
  std::string decode(std::span<const std::int32_t> ids, const decode_options& options = {}) const;

  std::optional<std::int32_t> token_to_id(std::string_view token) const;
  std::optional<std::string> id_to_token(std::int32_t id) const;
  bool is_special(std::int32_t id) const;
  // Distinct tokens, added ones included (tokenizers' get_vocab_size(true)).
  std::size_t vocab_size() const;
  const std::string& source() const;
  std::string text() const;  // one line for logs

  struct state;

 private:
  std::shared_ptr<const state> state_;
};

}  // namespace crucible::policy
