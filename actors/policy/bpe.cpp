#include "actors/policy/bpe.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <queue>

#include "actors/policy/unicode.hpp"

namespace crucible::policy::detail {
namespace {

using json = nlohmann::json;

error bad(const std::string& source, const std::string& field, const std::string& what) {
  return make_error(errc::invalid_argument, source + ": field " + field + " " + what);
}

// One symbol of a word being merged (tokenizers' word.rs Symbol).
struct symbol {
  std::int32_t id;
  std::int64_t prev, next;
  std::size_t len;  // bytes; 0 once merged into its left neighbour
};

struct candidate {
  std::uint32_t rank;
  std::size_t pos;
  std::int32_t new_id;
};

// Lowest rank first; among equal ranks the leftmost.
struct after {
  bool operator()(const candidate& a, const candidate& b) const {
    return a.rank != b.rank ? a.rank > b.rank : a.pos > b.pos;
  }
};

result<std::string> optional_string(const json& spec, const char* key, const std::string& source) {
  auto it = spec.find(key);
  if (it == spec.end() || it->is_null()) return std::string();
  if (!it->is_string()) return bad(source, std::string("model.") + key, "is not a string");
  return it->get<std::string>();
}

}  // namespace

bpe_model::bpe_model(bpe_model&& other) noexcept
    : vocab_(std::move(other.vocab_)),
      vocab_r_(std::move(other.vocab_r_)),
      merges_(std::move(other.merges_)),
      unk_token_(std::move(other.unk_token_)),
      continuing_subword_prefix_(std::move(other.continuing_subword_prefix_)),
      end_of_word_suffix_(std::move(other.end_of_word_suffix_)),
      fuse_unk_(other.fuse_unk_),
      byte_fallback_(other.byte_fallback_),
      ignore_merges_(other.ignore_merges_) {}

result<bpe_model> bpe_model::from_json(const json& spec, const std::string& source) {
  if (!spec.is_object()) return bad(source, "model", "is not an object");
  auto type = spec.find("type");
  if (type != spec.end() && (!type->is_string() || type->get<std::string>() != "BPE")) {
    return bad(source, "model.type", "is " + type->dump() + "; only BPE is supported");
  }
  auto dropout = spec.find("dropout");
  if (dropout != spec.end() && !dropout->is_null() && !(dropout->is_number() && dropout->get<double>() == 0.0)) {
    return bad(source, "model.dropout", "is set; BPE dropout is not supported");
  }
  bpe_model m;
  auto vocab = spec.find("vocab");
  if (vocab == spec.end() || !vocab->is_object()) return bad(source, "model.vocab", "is missing or not an object");
  for (const auto& [token, id] : vocab->items()) {
    if (!id.is_number_integer() || id.get<std::int64_t>() < 0 || id.get<std::int64_t>() > INT32_MAX) {
      return bad(source, "model.vocab[\"" + token + "\"]", "is not a token id");
    }
    const auto value = id.get<std::int32_t>();
    m.vocab_.emplace(token, value);
    m.vocab_r_[value] = token;
  }

  auto prefix = optional_string(spec, "continuing_subword_prefix", source);
  if (!prefix) return prefix.error();
  m.continuing_subword_prefix_ = *prefix;
  auto suffix = optional_string(spec, "end_of_word_suffix", source);
  if (!suffix) return suffix.error();
  m.end_of_word_suffix_ = *suffix;
  auto unk = optional_string(spec, "unk_token", source);
  if (!unk) return unk.error();
  if (!unk->empty()) {
    if (!m.vocab_.contains(*unk)) return bad(source, "model.unk_token", "names \"" + *unk + "\", which is not in model.vocab");
    m.unk_token_ = *unk;
  }
  for (auto [key, target] : {std::pair{"fuse_unk", &m.fuse_unk_}, std::pair{"byte_fallback", &m.byte_fallback_},
                             std::pair{"ignore_merges", &m.ignore_merges_}}) {
    auto it = spec.find(key);
    if (it == spec.end() || it->is_null()) continue;
    if (!it->is_boolean()) return bad(source, std::string("model.") + key, "is not true or false");
    *target = it->get<bool>();
  }

  auto merges = spec.find("merges");
  if (merges == spec.end() || !merges->is_array()) return bad(source, "model.merges", "is missing or not a list");
  for (std::size_t rank = 0; rank < merges->size(); ++rank) {
    const auto& entry = (*merges)[rank];
    const std::string field = "model.merges[" + std::to_string(rank) + "]";
    std::string a, b;
    if (entry.is_string()) {  // "a b"
      const auto line = entry.get<std::string>();
      const auto space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos) {
        return bad(source, field, "\"" + line + "\" is not two tokens separated by one space");
      }
      a = line.substr(0, space);
      b = line.substr(space + 1);
    } else if (entry.is_array() && entry.size() == 2 && entry[0].is_string() && entry[1].is_string()) {  // ["a", "b"]
      a = entry[0].get<std::string>();
      b = entry[1].get<std::string>();
    } else {
      return bad(source, field, "is neither \"a b\" nor [\"a\", \"b\"]");
    }
    auto a_id = m.vocab_.find(a);
    if (a_id == m.vocab_.end()) return bad(source, field, "names \"" + a + "\", which is not in model.vocab");
    auto b_id = m.vocab_.find(b);
    if (b_id == m.vocab_.end()) return bad(source, field, "names \"" + b + "\", which is not in model.vocab");
    const std::size_t skip = std::min(m.continuing_subword_prefix_.size(), b.size());
    const std::string merged = a + b.substr(skip);
    auto new_id = m.vocab_.find(merged);
    if (new_id == m.vocab_.end()) return bad(source, field, "makes \"" + merged + "\", which is not in model.vocab");
    // A repeated pair keeps its last rank, as tokenizers' HashMap collect does.
    m.merges_[pair_key(a_id->second, b_id->second)] = merge{static_cast<std::uint32_t>(rank), new_id->second};
  }
  return m;
}

std::optional<std::int32_t> bpe_model::token_to_id(std::string_view token) const {
  auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* bpe_model::id_to_token(std::int32_t id) const {
  auto it = vocab_r_.find(id);
  return it == vocab_r_.end() ? nullptr : &it->second;
}

std::vector<std::int32_t> bpe_model::merge_word(std::string_view piece) const {
  std::vector<symbol> symbols;
  auto add = [&symbols](std::int32_t id, std::size_t len) {
    const auto n = static_cast<std::int64_t>(symbols.size());
    if (!symbols.empty()) symbols.back().next = n;
    symbols.push_back({id, n - 1, -1, len});
  };
  bool has_unk = false;  // a pending unknown: unk_id over unk_len bytes
  std::int32_t unk_id = 0;
  std::size_t unk_len = 0;
  for (std::size_t i = 0; i < piece.size();) {
    std::size_t len = 1;
    unicode::decode_at(piece, i, &len);
    const bool first = i == 0, last = i + len >= piece.size();
    std::string s(piece.substr(i, len));
    i += len;
    if (!first) s = continuing_subword_prefix_ + s;
    if (last) s += end_of_word_suffix_;
    if (auto it = vocab_.find(s); it != vocab_.end()) {
      if (has_unk) add(unk_id, unk_len), has_unk = false;
      add(it->second, len);
      continue;
    }
    if (byte_fallback_) {
      std::vector<std::int32_t> bytes;
      for (unsigned char c : s) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", c);
        auto it = vocab_.find(name);
        if (it == vocab_.end()) break;
        bytes.push_back(it->second);
      }
      if (bytes.size() == s.size()) {
        for (auto id : bytes) add(id, 1);
        continue;
      }
    }
    if (unk_token_) {
      if (has_unk && fuse_unk_) {
        unk_len += len;
      } else {
        if (has_unk) add(unk_id, unk_len);
        has_unk = true;
        unk_id = vocab_.at(*unk_token_);
        unk_len = len;
      }
    }
  }
  if (has_unk) add(unk_id, unk_len);

  std::priority_queue<candidate, std::vector<candidate>, after> queue;
  for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
    if (auto it = merges_.find(pair_key(symbols[i].id, symbols[i + 1].id)); it != merges_.end()) {
      queue.push({it->second.rank, i, it->second.new_id});
    }
  }
  while (!queue.empty()) {
    const candidate top = queue.top();
    queue.pop();
    symbol& cur = symbols[top.pos];
    if (cur.len == 0 || cur.next == -1) continue;
    const auto next_pos = static_cast<std::size_t>(cur.next);
    const symbol right = symbols[next_pos];
    auto still = merges_.find(pair_key(cur.id, right.id));
    if (still == merges_.end() || still->second.new_id != top.new_id) continue;  // an outdated entry
    cur.id = top.new_id;
    cur.len += right.len;
    cur.next = right.next;
    symbols[next_pos].len = 0;
    if (right.next > -1 && static_cast<std::size_t>(right.next) < symbols.size()) {
      symbols[static_cast<std::size_t>(right.next)].prev = static_cast<std::int64_t>(top.pos);
    }
    if (cur.prev >= 0) {
      const auto prev = static_cast<std::size_t>(cur.prev);
      if (auto it = merges_.find(pair_key(symbols[prev].id, cur.id)); it != merges_.end()) {
        queue.push({it->second.rank, prev, it->second.new_id});
      }
    }
    if (cur.next >= 0 && static_cast<std::size_t>(cur.next) < symbols.size()) {
      const auto nxt = static_cast<std::size_t>(cur.next);
      if (auto it = merges_.find(pair_key(cur.id, symbols[nxt].id)); it != merges_.end()) {
        queue.push({it->second.rank, top.pos, it->second.new_id});
      }
    }
  }
  std::vector<std::int32_t> ids;
  for (const auto& s : symbols)
    if (s.len != 0) ids.push_back(s.id);
  return ids;
}

void bpe_model::tokenize(std::string_view piece, std::vector<std::int32_t>& out) const {
  if (piece.empty()) return;
  if (ignore_merges_) {
    if (auto it = vocab_.find(std::string(piece)); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  const bool cacheable = piece.size() < kCacheMaxPieceBytes;
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    if (auto it = cache_.find(std::string(piece)); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  auto ids = merge_word(piece);
  out.insert(out.end(), ids.begin(), ids.end());
  if (cacheable) {
    std::lock_guard lock(cache_mutex_);
    if (cache_.size() < kCacheCapacity) cache_.emplace(std::string(piece), std::move(ids));
  }
}

}  // namespace crucible::policy::detail
