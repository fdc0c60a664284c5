#include "actors/policy/tokenizer.hpp"

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <unordered_map>

#include "actors/policy/added_tokens.hpp"
#include "actors/policy/bpe.hpp"
#include "actors/policy/pre_tokenizer.hpp"
#include "actors/policy/unicode.hpp"

namespace crucible::policy {
namespace {

using json = nlohmann::json;

error bad(const std::string& source, const std::string& field, const std::string& what) {
  return make_error(errc::invalid_argument, source + ": field " + field + " " + what);
}

std::string type_of(const json& spec) {
  auto it = spec.find("type");
  return it != spec.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// One item of a TemplateProcessing "single" template: special ids, or the
// sequence itself (empty ids).
struct template_item {
  bool is_sequence = false;
  std::vector<std::int32_t> ids;
};

}  // namespace

struct tokenizer::state {
  std::string source;
  std::vector<unicode::normal_form> normalizers;
  std::vector<std::unique_ptr<detail::added_token>> added;  // stable addresses for the matchers
  std::unordered_map<std::string, std::int32_t> added_by_content;
  std::unordered_map<std::int32_t, const detail::added_token*> added_by_id;
  detail::added_token_matcher raw_matcher;         // normalized == false, against the raw text
  detail::added_token_matcher normalized_matcher;  // normalized == true, against normalized text
  detail::pre_tokenizer pre;
  std::optional<detail::bpe_model> model;  // set once by build()
  std::vector<std::vector<template_item>> templates;  // applied in order when adding special tokens
  bool byte_level_decoder = false;

  std::string normalize(std::string_view s) const {
    std::string out(s);
    for (auto form : normalizers) out = unicode::normalize(out, form);
    return out;
  }
};

namespace {

status parse_normalizer(const json& spec, const std::string& source, const std::string& field,
                        std::vector<unicode::normal_form>& out) {
  if (spec.is_null()) return status::success();
  const std::string type = type_of(spec);
  if (type == "NFC") out.push_back(unicode::normal_form::nfc);
  else if (type == "NFD") out.push_back(unicode::normal_form::nfd);
  else if (type == "NFKC") out.push_back(unicode::normal_form::nfkc);
  else if (type == "NFKD") out.push_back(unicode::normal_form::nfkd);
  else if (type == "Sequence") {
    auto list = spec.find("normalizers");
    if (list == spec.end() || !list->is_array()) return bad(source, field + ".normalizers", "is missing or not a list");
    for (std::size_t i = 0; i < list->size(); ++i) {
      CRUCIBLE_TRY(parse_normalizer((*list)[i], source, field + ".normalizers[" + std::to_string(i) + "]", out));
    }
  } else {
    return bad(source, field + ".type", "is \"" + type + "\"; supported normalizers: NFC, NFD, NFKC, NFKD, Sequence");
  }
  return status::success();
}

status parse_post_processor(const json& spec, const std::string& source, const std::string& field,
                            std::vector<std::vector<template_item>>& out) {
  if (spec.is_null()) return status::success();
  const std::string type = type_of(spec);
  if (type == "ByteLevel") return status::success();  // only moves offsets
  if (type == "Sequence") {
    auto list = spec.find("processors");
    if (list == spec.end() || !list->is_array()) return bad(source, field + ".processors", "is missing or not a list");
    for (std::size_t i = 0; i < list->size(); ++i) {
      CRUCIBLE_TRY(parse_post_processor((*list)[i], source, field + ".processors[" + std::to_string(i) + "]", out));
    }
    return status::success();
  }
  if (type != "TemplateProcessing") {
    return bad(source, field + ".type", "is \"" + type + "\"; supported post-processors: ByteLevel, TemplateProcessing, Sequence");
  }
  auto single = spec.find("single");
  auto specials = spec.find("special_tokens");
  if (single == spec.end() || !single->is_array()) return bad(source, field + ".single", "is missing or not a list");
  std::vector<template_item> items;
  for (std::size_t i = 0; i < single->size(); ++i) {
    const auto& piece = (*single)[i];
    const std::string where = field + ".single[" + std::to_string(i) + "]";
    if (piece.contains("Sequence")) {
      items.push_back({true, {}});
    } else if (piece.contains("SpecialToken") && piece["SpecialToken"].contains("id")) {
      const auto name = piece["SpecialToken"]["id"].get<std::string>();
      if (specials == spec.end() || !specials->contains(name) || !(*specials)[name].contains("ids")) {
        return bad(source, where, "names special token \"" + name + "\", which " + field + ".special_tokens lacks");
      }
      template_item item;
      // Ids as the vocabulary's are: the policy looks them up as they are (a
      // negative one passed through to encode(), fuzz/regressions/tokenizer).
      for (const auto& id : (*specials)[name]["ids"]) {
        if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > INT32_MAX) {
          return bad(source, field + ".special_tokens." + name + ".ids",
                     "holds " + id.dump() + ", which is not a token id (an integer from 0 to 2^31 - 1)");
        }
        item.ids.push_back(id.get<std::int32_t>());
      }
      items.push_back(std::move(item));
    } else {
      return bad(source, where, "is neither a Sequence nor a SpecialToken");
    }
  }
  out.push_back(std::move(items));
  return status::success();
}

status parse_decoder(const json& spec, const std::string& source, const std::string& field, bool& byte_level) {
  if (spec.is_null()) return status::success();
  const std::string type = type_of(spec);
  if (type == "ByteLevel") {
    byte_level = true;
    return status::success();
  }
  if (type == "Sequence") {
    auto list = spec.find("decoders");
    if (list == spec.end() || !list->is_array()) return bad(source, field + ".decoders", "is missing or not a list");
    for (std::size_t i = 0; i < list->size(); ++i) {
      CRUCIBLE_TRY(parse_decoder((*list)[i], source, field + ".decoders[" + std::to_string(i) + "]", byte_level));
    }
    return status::success();
  }
  return bad(source, field + ".type", "is \"" + type + "\"; supported decoders: ByteLevel");
}

// tokenizers' AddedVocabulary::add_tokens: the id is the model's when the
// content is in its vocabulary, otherwise the next one after the largest.
status parse_added_tokens(const json& list, const std::string& source, tokenizer::state& s) {
  if (list.is_null()) return status::success();
  if (!list.is_array()) return bad(source, "added_tokens", "is not a list");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& entry = list[i];
    const std::string where = "added_tokens[" + std::to_string(i) + "]";
    if (!entry.is_object() || !entry.contains("content") || !entry["content"].is_string()) {
      return bad(source, where + ".content", "is missing or not a string");
    }
    auto token = std::make_unique<detail::added_token>();
    token->content = entry["content"].get<std::string>();
    token->special = entry.value("special", false);
    token->normalized = entry.value("normalized", !token->special);
    token->single_word = entry.value("single_word", false);
    token->lstrip = entry.value("lstrip", false);
    token->rstrip = entry.value("rstrip", false);
    if (token->content.empty()) continue;
    if (!unicode::valid_utf8(token->content)) return bad(source, where + ".content", "is not valid UTF-8");
    if (auto known = s.added_by_content.find(token->content); known != s.added_by_content.end()) {
      token->id = known->second;
    } else if (auto id = s.model->token_to_id(token->content)) {
      token->id = *id;
    } else {
      const auto model_size = static_cast<std::int32_t>(s.model->vocab_size());
      std::int32_t next = model_size;
      if (!s.added_by_content.empty()) {
        std::int32_t max_id = 0;
        for (const auto& [_, id] : s.added_by_content) max_id = std::max(max_id, id);
        next = (max_id >= model_size || model_size == 0) ? max_id + 1 : model_size;
      }
      token->id = next;
    }
    s.added_by_content[token->content] = token->id;
    s.added_by_id[token->id] = token.get();
    s.added.push_back(std::move(token));
  }
  // Special tokens first, then the others, each in file order (refresh_added_tokens).
  std::vector<detail::added_token_matcher::pattern> raw, normalized;
  std::set<std::string> seen;
  for (int pass = 0; pass < 2; ++pass) {
    for (auto it = s.added.rbegin(); it != s.added.rend(); ++it) {  // the last definition of a content wins
      const auto& t = **it;
      if (t.special != (pass == 0) || !seen.insert(t.content).second) continue;
      if (t.normalized) normalized.push_back({s.normalize(t.content), &t});
      else raw.push_back({t.content, &t});
    }
  }
  s.raw_matcher = detail::added_token_matcher(std::move(raw));
  s.normalized_matcher = detail::added_token_matcher(std::move(normalized));
  return status::success();
}

result<tokenizer::state*> build(const json& root, const std::string& source, tokenizer::state& s) {
  if (!root.is_object()) return bad(source, "(root)", "is not a JSON object");
  for (const char* key : {"truncation", "padding"}) {
    if (root.contains(key) && !root[key].is_null()) {
      return bad(source, key, "is set; truncation and padding are not supported (set them to null)");
    }
  }
  s.source = source;
  if (!root.contains("model")) return bad(source, "model", "is missing");
  auto model = detail::bpe_model::from_json(root["model"], source);
  if (!model) return model.error();
  s.model.emplace(std::move(*model));
  CRUCIBLE_TRY(parse_normalizer(root.value("normalizer", json()), source, "normalizer", s.normalizers));
  auto pre = detail::pre_tokenizer::from_json(root.value("pre_tokenizer", json()), source);
  if (!pre) return pre.error();
  s.pre = std::move(*pre);
  CRUCIBLE_TRY(parse_post_processor(root.value("post_processor", json()), source, "post_processor", s.templates));
  CRUCIBLE_TRY(parse_decoder(root.value("decoder", json()), source, "decoder", s.byte_level_decoder));
  CRUCIBLE_TRY(parse_added_tokens(root.value("added_tokens", json()), source, s));
  return &s;
}

}  // namespace

result<tokenizer> tokenizer::parse(std::string_view json_text, const std::string& source) {
  json root = json::parse(json_text.begin(), json_text.end(), nullptr, /*allow_exceptions=*/false);
  if (root.is_discarded()) return make_error(errc::invalid_argument, source + ": not valid JSON");
  auto s = std::make_shared<state>();
  try {
    auto built = build(root, source, *s);
    if (!built) return built.error();
  } catch (const json::exception& e) {  // a field of an unexpected JSON type
    return make_error(errc::invalid_argument, source + ": " + e.what());
  }
  tokenizer t;
  t.state_ = std::move(s);
  return t;
}

result<tokenizer> tokenizer::load(const std::filesystem::path& path) {
  std::error_code ec;
  const auto file = std::filesystem::is_directory(path, ec) ? path / "tokenizer.json" : path;
  std::ifstream in(file, std::ios::binary);
  if (!in) {
    return make_error(std::filesystem::exists(file, ec) ? errc::io : errc::not_found, file.string() + ": cannot open");
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  return parse(buffer.str(), file.string());
}

result<std::vector<std::int32_t>> tokenizer::encode(std::string_view text, const encode_options& options) const {
  const state& s = *state_;
  if (!unicode::valid_utf8(text)) return make_error(errc::invalid_argument, "encode: the text is not valid UTF-8");
  // 1. Added tokens that match the raw text; 2. normalize the rest and find
  // the normalized added tokens (tokenizers' extract_and_normalize).
  std::vector<detail::text_piece> raw;
  s.raw_matcher.split(text, raw);
  std::vector<detail::text_piece> pieces;
  for (auto& p : raw) {
    if (p.token) {
      pieces.push_back(std::move(p));
    } else {
      s.normalized_matcher.split(s.normalize(p.text), pieces);
    }
  }
  // 3. Pre-tokenize and run BPE on what is not an added token.
  std::vector<std::int32_t> ids;
  std::vector<std::string> words;
  for (const auto& p : pieces) {
    if (p.token) {
      ids.push_back(*p.token);
      continue;
    }
    words.clear();
    s.pre.run(p.text, words);
    for (const auto& w : words) s.model->tokenize(w, ids);
  }
  if (!options.add_special_tokens) return ids;
  for (const auto& items : s.templates) {
    std::vector<std::int32_t> with;
    for (const auto& item : items) {
      const auto& part = item.is_sequence ? ids : item.ids;
      with.insert(with.end(), part.begin(), part.end());
    }
    ids = std::move(with);
  }
  return ids;
}

std::string tokenizer::decode(std::span<const std::int32_t> ids, const decode_options& options) const {
  const state& s = *state_;
  std::vector<const std::string*> tokens;
  for (auto id : ids) {
    const std::string* token = nullptr;
    if (auto it = s.added_by_id.find(id); it != s.added_by_id.end()) {
      if (options.skip_special_tokens && it->second->special) continue;
      token = &it->second->content;
    } else {
      token = s.model->id_to_token(id);
    }
    if (token) tokens.push_back(token);
  }
  std::string out;
  if (!s.byte_level_decoder) {
    for (std::size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + *tokens[i];
    return out;
  }
  std::string bytes;
  for (const std::string* token : tokens) {
    std::string mapped;
    bool all_bytes = true;
    for (std::size_t i = 0; i < token->size();) {
      std::size_t len = 1;
      auto b = unicode::char_to_byte(unicode::decode_at(*token, i, &len));
      if (!b) {
        all_bytes = false;
        break;
      }
      mapped += static_cast<char>(*b);
      i += len;
    }
    bytes += all_bytes ? mapped : *token;
  }
  return unicode::from_utf8_lossy(bytes);
}

std::optional<std::int32_t> tokenizer::token_to_id(std::string_view token) const {
  if (auto it = state_->added_by_content.find(std::string(token)); it != state_->added_by_content.end()) return it->second;
  return state_->model->token_to_id(token);
}

std::optional<std::string> tokenizer::id_to_token(std::int32_t id) const {
  if (auto it = state_->added_by_id.find(id); it != state_->added_by_id.end()) return it->second->content;
  if (const std::string* t = state_->model->id_to_token(id)) return *t;
  return std::nullopt;
}

bool tokenizer::is_special(std::int32_t id) const {
  auto it = state_->added_by_id.find(id);
  return it != state_->added_by_id.end() && it->second->special;
}

std::size_t tokenizer::vocab_size() const {
  std::size_t n = state_->model->vocab_size();
  for (const auto& [content, _] : state_->added_by_content)
    if (!state_->model->token_to_id(content)) ++n;
  return n;
}

const std::string& tokenizer::source() const { return state_->source; }

std::string tokenizer::text() const {
  std::ostringstream o;
  o << "tokenizer " << state_->source << ": BPE, " << vocab_size() << " tokens, " << state_->added_by_id.size()
    << " added";
  return o.str();
}

}  // namespace crucible::policy
