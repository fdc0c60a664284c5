#include "actors/detector/detector_options.hpp"

namespace crucible::detector {

const char* to_string(detector_kind k) { return k == detector_kind::judge ? "judge" : "static"; }

result<detector_kind> parse_detector_kind(const std::string& text) {
  if (text == "static") return detector_kind::static_rules;
  if (text == "judge") return detector_kind::judge;
  return make_error(errc::invalid_argument, "detector kind '" + text + "': expected static or judge");
}

status read(config::section s, detector_options& out) {
  std::string kind;
  CRUCIBLE_TRY(s.read("name", out.name));
  CRUCIBLE_TRY(s.read("kind", kind));
  if (!kind.empty()) {
    auto k = parse_detector_kind(kind);
    if (!k) return make_error(errc::invalid_argument, "[" + s.name() + "] kind: " + k.error().message);
    out.kind = *k;
  }
  CRUCIBLE_TRY(s.read("required", out.required));
  CRUCIBLE_TRY(s.read("deadline_ms", out.deadline_ms));
  CRUCIBLE_TRY(s.read("slots", out.slots));
  CRUCIBLE_TRY(s.read("rules", out.rules));
  auto& j = out.judge;
  CRUCIBLE_TRY(s.read("url", j.url));
  CRUCIBLE_TRY(s.read("model", j.model));
  CRUCIBLE_TRY(s.read("api_key", j.api_key));
  CRUCIBLE_TRY(s.read("api_key_env", j.api_key_env));
  CRUCIBLE_TRY(s.read("timeout_ms", j.timeout_ms));
  CRUCIBLE_TRY(s.read("min_speedup", j.min_speedup));
  CRUCIBLE_TRY(s.read("best_multiple", j.best_multiple));
  CRUCIBLE_TRY(s.read("similar_hacks", j.similar_hacks));
  CRUCIBLE_TRY(s.read("hacks_db", j.hacks_db));
  CRUCIBLE_TRY(s.read("max_code_chars", j.max_code_chars));
  CRUCIBLE_TRY(s.read("max_tokens", j.max_tokens));
  return s.finish();
}

status validate(const detector_options& o) {
  auto bad = [](const std::string& what) { return make_error(errc::invalid_argument, "[detector] " + what); };
  if (o.name.find('\0') != std::string::npos) return bad("name: contains a NUL byte");
  if (o.slots == 0) return bad("slots: must be at least 1");
  if (o.kind == detector_kind::static_rules && o.rules.empty()) return bad("rules: a static detector needs a rule file");
  if (o.kind != detector_kind::judge) return {};
  const auto& j = o.judge;
  if (j.model.empty()) return bad("model: a judge needs a model name");
  if (j.url.rfind("http://", 0) != 0) return bad("url '" + j.url + "': expected http://HOST[:PORT][/PREFIX]");
  if (j.timeout_ms == 0) return bad("timeout_ms: must be positive");
  if (!(j.min_speedup > 0)) return bad("min_speedup: must be positive");
  if (j.best_multiple < 0) return bad("best_multiple: must not be negative");
  return {};
}

}  // namespace crucible::detector
