// The static detector: regular expressions over the candidate's code, each
// rule with a name, a verdict (hack or unsure) and a reason. The defaults in
// configs/detectors/static.toml cover the known hack patterns (side streams,
// threads, tensor subclasses, patched timers, frame and gc inspection,
// calling the reference, fallbacks, caching by address, exiting, writes to
// absolute paths, sockets).
//
// Verdict: hack when any hack rule matches, else unsure when any unsure rule
// matches, else clean; the reason names every rule that matched and the line
// of its first match. Who calls it: the detector actor. Thread-compatible
// (const after loading).
#pragma once

#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "actors/detector/detector.hpp"
#include "runtime/base/result.hpp"

namespace crucible::detector {

struct rule {
  std::string name;     // "side_stream"
  std::string pattern;  // ECMAScript regex; ^ and $ match at line ends
  verdict_kind verdict = verdict_kind::hack;  // hack or unsure
  std::string reason;
  double confidence = 0.9;
};

// A rule that matched, with the 1-based line of its first match.
struct rule_match {
  const rule* matched;
  std::size_t line;
};

class static_detector final : public detector {
 public:
  // Compiles rules; errc::invalid_argument naming the rule whose pattern
  // does not compile, that has no name, or whose verdict is clean.
  static result<std::unique_ptr<static_detector>> create(std::vector<rule> rules, std::string source = "inline");

  verdict examine(const detect_input& in) override;
  std::string describe() const override;

  // Every rule matching code, in rule order (for tests and `crucible hacks add`).
  std::vector<rule_match> matches(const std::string& code) const;
  const std::vector<rule>& rules() const { return rules_; }

 private:
  static_detector(std::vector<rule> rules, std::vector<std::regex> compiled, std::string source);
  std::vector<rule> rules_;
  std::vector<std::regex> compiled_;
  std::string source_;
};

// Reads rules from a TOML file of [[rule]] tables with keys name, pattern,
// verdict ("hack" or "unsure"), reason and optionally confidence.
// Errors: errc::not_found, errc::invalid_argument naming file, rule and key.
result<std::vector<rule>> load_rules(const std::string& path);

}  // namespace crucible::detector
