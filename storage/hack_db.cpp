#include "storage/hack_db.hpp"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>

#include <nlohmann/json.hpp>

namespace crucible::storage {

namespace {

using json = nlohmann::json;
using term_counts = std::map<std::string, double>;

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool punct(char c) {
  return !ident_char(c) && !std::isspace(static_cast<unsigned char>(c)) && c != '"' && c != '\'' && c != '#';
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

term_counts count_terms(std::string_view code) {
  term_counts counts;
  for (auto& t : code_tokens(code)) counts[t] += 1;
  return counts;
}

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

status validate_id(std::string_view id) {
  if (id.empty()) return make_error(errc::invalid_argument, "hack record: the candidate id is empty");
  if (id.find('\0') != std::string_view::npos)
    return make_error(errc::invalid_argument, "hack record: the candidate id contains a NUL byte");
  return {};
}

// tf-idf weight of a term: (1 + log tf) * idf.
double weight(double tf, double idf) { return (1 + std::log(tf)) * idf; }

}  // namespace

const char* to_string(hack_add_outcome o) { return o == hack_add_outcome::added ? "added" : "duplicate"; }

std::vector<std::string> code_tokens(std::string_view code) {
  std::vector<std::string> words;
  std::size_t i = 0;
  while (i < code.size()) {
    char c = code[i];
    if (c == '#') {  // a comment runs to the end of the line
      while (i < code.size() && code[i] != '\n') ++i;
    } else if (ident_start(c)) {
      std::size_t start = i;
      while (i < code.size() && ident_char(code[i])) ++i;
      std::size_t parts = 1;
      while (i + 1 < code.size() && code[i] == '.' && ident_start(code[i + 1])) {
        ++i;
        while (i < code.size() && ident_char(code[i])) ++i;
        ++parts;
      }
      words.push_back(lower(code.substr(start, i - start)));
      if (parts > 1) {  // also the last component: self.s.synchronize ~ stream.synchronize
        auto dot = words.back().rfind('.');
        words.push_back(words.back().substr(dot + 1));
      }
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      std::size_t start = i;
      while (i < code.size() && (ident_char(code[i]) || code[i] == '.')) ++i;
      words.push_back(lower(code.substr(start, i - start)));
    } else if (punct(c)) {
      std::size_t start = i;
      while (i < code.size() && punct(code[i])) ++i;
      words.emplace_back(code.substr(start, i - start));
    } else {
      ++i;
    }
  }
  std::vector<std::string> tokens = words;
  for (std::size_t k = 1; k < words.size(); ++k) tokens.push_back(words[k - 1] + " " + words[k]);
  return tokens;
}

std::string encode_hack(const hack_record& r) {
  return json{{"candidate_id", r.candidate_id}, {"task_id", r.task_id},   {"code", r.code},
              {"reason", r.reason},             {"detector", r.detector}, {"features", r.features},
              {"recorded_ns", r.recorded_ns}}
      .dump();
}

result<hack_record> decode_hack(std::string_view bytes) {
  try {
    auto j = json::parse(bytes);
    hack_record r;
    r.candidate_id = j.at("candidate_id").get<std::string>();
    r.task_id = j.at("task_id").get<std::string>();
    r.code = j.at("code").get<std::string>();
    r.reason = j.at("reason").get<std::string>();
    r.detector = j.at("detector").get<std::string>();
    r.features = j.at("features").get<std::vector<std::string>>();
    r.recorded_ns = j.at("recorded_ns").get<std::int64_t>();
    return r;
  } catch (const json::exception& e) {
    return make_error(errc::corrupt, std::string("hack record does not decode: ") + e.what());
  }
}

hack_db::hack_db(std::shared_ptr<kv_store> kv) : kv_(std::move(kv)) { CRUCIBLE_CHECK(kv_ != nullptr, "hack_db needs a store"); }

std::string hack_db::describe() const { return "hacks(" + kv_->describe() + ")"; }

result<hack_add_outcome> hack_db::add(hack_record record) {
  CRUCIBLE_TRY(validate_id(record.candidate_id));
  std::lock_guard lock(mu_);  // no second add of the same id between get and write
  auto existing = kv_->get(family::hacks, record.candidate_id);
  if (!existing) return make_error(existing.error().code, describe() + ": " + existing.error().message);
  if (existing->has_value()) return hack_add_outcome::duplicate;
  if (record.recorded_ns == 0) record.recorded_ns = now_ns();
  write_batch batch;
  batch.put(family::hacks, record.candidate_id, encode_hack(record));
  if (auto s = kv_->write(batch); !s) return make_error(s.error().code, describe() + ": " + s.error().message);
  terms_[record.candidate_id] = count_terms(record.code);
  return hack_add_outcome::added;
}

result<std::optional<hack_record>> hack_db::get(std::string_view candidate_id) {
  CRUCIBLE_TRY(validate_id(candidate_id));
  auto bytes = kv_->get(family::hacks, candidate_id);
  if (!bytes) return make_error(bytes.error().code, describe() + ": " + bytes.error().message);
  if (!bytes->has_value()) return std::optional<hack_record>{};
  auto r = decode_hack(**bytes);
  if (!r) return make_error(errc::corrupt, describe() + " key " + std::string(candidate_id) + ": " + r.error().message);
  return std::optional<hack_record>(std::move(*r));
}

result<std::vector<hack_record>> hack_db::list() {
  std::vector<hack_record> out;
  std::optional<error> bad;
  auto s = kv_->scan(family::hacks, "", [&](std::string_view key, std::string_view value) {
    auto r = decode_hack(value);
    if (!r) {
      bad = make_error(errc::corrupt, describe() + " key " + std::string(key) + ": " + r.error().message);
      return false;
    }
    out.push_back(std::move(*r));
    return true;
  });
  if (!s) return make_error(s.error().code, describe() + ": " + s.error().message);
  if (bad) return *bad;
  return out;
}

result<std::vector<similar_hack>> hack_db::similar(std::string_view code, std::size_t k) {
  auto all = list();  // the store may have writers other than this object
  if (!all) return all.error();
  std::vector<const term_counts*> docs;
  {
    std::lock_guard lock(mu_);
    for (auto& h : *all) {
      auto it = terms_.find(h.candidate_id);
      if (it == terms_.end()) it = terms_.emplace(h.candidate_id, count_terms(h.code)).first;
      docs.push_back(&it->second);  // map nodes are stable; entries are never erased
    }
  }
  term_counts query = count_terms(code);
  // Document frequencies over the known hacks and the query.
  std::map<std::string_view, double> df;
  for (auto* d : docs)
    for (auto& [t, n] : *d) df[t] += 1;
  for (auto& [t, n] : query) df[t] += 1;
  const double n_docs = static_cast<double>(docs.size() + 1);
  auto idf = [&](std::string_view t) { return std::log((n_docs + 1) / (df[t] + 1)) + 1; };

  double query_norm = 0;
  for (auto& [t, n] : query) query_norm += std::pow(weight(n, idf(t)), 2);
  query_norm = std::sqrt(query_norm);

  std::vector<similar_hack> scored;
  for (std::size_t i = 0; i < docs.size(); ++i) {
    double dot = 0, norm = 0;
    for (auto& [t, n] : *docs[i]) {
      double w = weight(n, idf(t));
      norm += w * w;
      if (auto q = query.find(t); q != query.end()) dot += w * weight(q->second, idf(t));
    }
    if (dot <= 0 || norm <= 0 || query_norm <= 0) continue;
    scored.push_back({std::move((*all)[i]), std::min(1.0, dot / (std::sqrt(norm) * query_norm))});
  }
  std::sort(scored.begin(), scored.end(), [](const similar_hack& a, const similar_hack& b) {
    if (a.similarity != b.similarity) return a.similarity > b.similarity;
    return a.hack.candidate_id < b.hack.candidate_id;
  });
  if (scored.size() > k) scored.resize(k);
  return scored;
}

}  // namespace crucible::storage
