#include "actors/detector/static_detector.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace crucible::detector {

static_detector::static_detector(std::vector<rule> rules, std::vector<std::regex> compiled, std::string source)
    : rules_(std::move(rules)), compiled_(std::move(compiled)), source_(std::move(source)) {}

result<std::unique_ptr<static_detector>> static_detector::create(std::vector<rule> rules, std::string source) {
  std::vector<std::regex> compiled;
  for (const auto& r : rules) {
    auto where = fmt::format("{}: rule '{}'", source, r.name);
    if (r.name.empty()) return make_error(errc::invalid_argument, source + ": a rule has no name");
    if (r.verdict == verdict_kind::clean)
      return make_error(errc::invalid_argument, where + ": verdict must be hack or unsure");
    if (!(r.confidence >= 0 && r.confidence <= 1))
      return make_error(errc::invalid_argument, where + ": confidence must be in [0, 1]");
    try {
      compiled.emplace_back(r.pattern, std::regex::ECMAScript | std::regex::multiline | std::regex::optimize);
    } catch (const std::regex_error& e) {
      return make_error(errc::invalid_argument, where + ": pattern does not compile: " + e.what());
    }
  }
  return std::unique_ptr<static_detector>(new static_detector(std::move(rules), std::move(compiled), std::move(source)));
}

std::vector<rule_match> static_detector::matches(const std::string& code) const {
  std::vector<rule_match> out;
  for (std::size_t i = 0; i < rules_.size(); ++i) {
    std::smatch m;
    if (!std::regex_search(code, m, compiled_[i])) continue;
    auto offset = static_cast<std::size_t>(m.position(0));
    out.push_back({&rules_[i], 1 + static_cast<std::size_t>(std::count(code.begin(), code.begin() + offset, '\n'))});
  }
  return out;
}

verdict static_detector::examine(const detect_input& in) {
  verdict v;
  auto found = matches(in.code);
  if (found.empty()) {
    v.kind = verdict_kind::clean;
    v.confidence = 0.5;  // no known pattern; says nothing about unknown ones
    v.reason = fmt::format("none of {} rules matched", rules_.size());
    return v;
  }
  bool hack = std::any_of(found.begin(), found.end(), [](const rule_match& m) { return m.matched->verdict == verdict_kind::hack; });
  v.kind = hack ? verdict_kind::hack : verdict_kind::unsure;
  std::vector<std::string> reasons;
  for (const auto& m : found) {
    if (m.matched->verdict != v.kind) continue;
    v.features.push_back(m.matched->name);
    v.confidence = std::max(v.confidence, m.matched->confidence);
    reasons.push_back(fmt::format("{} (line {}): {}", m.matched->name, m.line, m.matched->reason));
  }
  v.reason = fmt::format("{}", fmt::join(reasons, "; "));
  return v;
}

std::string static_detector::describe() const { return fmt::format("static ({} rules from {})", rules_.size(), source_); }

result<std::vector<rule>> load_rules(const std::string& path) {
  if (!std::filesystem::exists(path)) return make_error(errc::not_found, path + ": no rule file there");
  toml::table root;
  try {
    root = toml::parse_file(path);
  } catch (const toml::parse_error& e) {
    return make_error(errc::invalid_argument, fmt::format("{}:{}:{}: {}", path, e.source().begin.line,
                                                          e.source().begin.column, e.description()));
  }
  for (auto&& [key, value] : root)
    if (key != "rule") return make_error(errc::invalid_argument, fmt::format("{}: unknown key '{}' (expected [[rule]] tables)", path, key.str()));
  std::vector<rule> rules;
  auto* array = root["rule"].as_array();
  if (!array) return make_error(errc::invalid_argument, path + ": no [[rule]] tables");
  for (std::size_t i = 0; i < array->size(); ++i) {
    auto* t = (*array)[i].as_table();
    auto where = fmt::format("{}: rule {}", path, i + 1);
    if (!t) return make_error(errc::invalid_argument, where + ": not a table");
    for (auto&& [key, value] : *t)
      if (key != "name" && key != "pattern" && key != "verdict" && key != "reason" && key != "confidence")
        return make_error(errc::invalid_argument, fmt::format("{}: unknown key '{}'", where, key.str()));
    rule r;
    auto text = [&](const char* key, std::string& out) -> status {
      auto v = (*t)[key].value<std::string>();
      if (!v || v->empty()) return make_error(errc::invalid_argument, fmt::format("{}: '{}' must be a non-empty string", where, key));
      out = *v;
      return {};
    };
    CRUCIBLE_TRY(text("name", r.name));
    where = fmt::format("{}: rule '{}'", path, r.name);
    CRUCIBLE_TRY(text("pattern", r.pattern));
    CRUCIBLE_TRY(text("reason", r.reason));
    std::string kind;
    CRUCIBLE_TRY(text("verdict", kind));
    if (kind == "hack") r.verdict = verdict_kind::hack;
    else if (kind == "unsure") r.verdict = verdict_kind::unsure;
    else return make_error(errc::invalid_argument, where + ": verdict '" + kind + "': expected hack or unsure");
    if (auto* c = (*t)["confidence"].node()) {
      auto d = c->value<double>();
      if (!d) return make_error(errc::invalid_argument, where + ": confidence must be a number");
      r.confidence = *d;
    }
    rules.push_back(std::move(r));
  }
  return rules;
}

}  // namespace crucible::detector
