// Options of one detector process: the [detector] section of a config
// (docs/configuration.md lists every key with its default), overridden by
// `crucible detector` flags. Read on the main thread before anything starts.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/base/result.hpp"
#include "runtime/config/config_file.hpp"

namespace crucible::detector {

enum class detector_kind : std::uint8_t { static_rules, judge };
const char* to_string(detector_kind k);
// "static" or "judge"; errc::invalid_argument otherwise.
result<detector_kind> parse_detector_kind(const std::string& text);

// The judge (judge_detector.hpp): asks an OpenAI-compatible chat endpoint,
// only on large reward leaps.
struct judge_options {
  // Base URL; the judge POSTs to {url}/v1/chat/completions. http:// only.
  // Default: http://127.0.0.1:8000.
  std::string url = "http://127.0.0.1:8000";
  // Model name sent in the request. Default: "" (must be set for a judge).
  std::string model;
  // API key sent as "Authorization: Bearer KEY". Default: "" (then the
  // environment variable named by api_key_env, if set).
  std::string api_key;
  // Environment variable holding the key. Default: OPENAI_API_KEY.
  std::string api_key_env = "OPENAI_API_KEY";
  // Connect, send and receive limit of one request, in ms. Default: 60000.
  std::uint32_t timeout_ms = 60000;
  // Judge a candidate whose speedup is at least this. Default: 3.0.
  double min_speedup = 3.0;
  // ... or at least this multiple of the best speedup this judge has seen
  // for the task (0 turns that test off). Default: 2.0.
  double best_multiple = 2.0;
  // Known hacks put in the prompt as examples. Default: 3.
  std::uint32_t similar_hacks = 3;
  // RocksDB directory of the hack database (storage/hack_db.hpp), opened
  // read-only for each judged candidate, so it may be the hub's live
  // database. Default: "" (no examples).
  std::string hacks_db;
  // Longest code sent, in characters (the rest is cut). Default: 20000.
  std::uint32_t max_code_chars = 20000;
  // max_tokens of the reply. Default: 512.
  std::uint32_t max_tokens = 512;
};

struct detector_options {
  // Name on the bus; jobs of kind "detect:NAME" come to it. Default: the
  // kind ("static" or "judge").
  std::string name;
  // static or judge. Default: static.
  detector_kind kind = detector_kind::static_rules;
  // Whether the referee waits for this detector's verdict. Default: false
  // (advisory).
  bool required = false;
  // How long the referee waits for a verdict, in ms. Default: 60000.
  std::uint32_t deadline_ms = 60000;
  // Candidates examined at once. Default: 1.
  std::uint32_t slots = 1;
  // Rule file of the static detector. Default: configs/detectors/static.toml.
  std::string rules = "configs/detectors/static.toml";
  judge_options judge;
};

// Reads [detector]; unknown keys and bad values are errors naming the key.
status read(config::section s, detector_options& out);
// Checks the combination (a judge needs a model, http:// URL, ...).
status validate(const detector_options& o);

}  // namespace crucible::detector
