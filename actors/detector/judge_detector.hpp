// The judge: the paper's reward-checking model. On a large reward leap (a
// speedup of at least min_speedup, or at least best_multiple times the best
// speedup this judge has seen for the task) it asks an OpenAI-compatible
// chat endpoint (POST {url}/v1/chat/completions) whether the candidate is a
// reward hack, with the most similar known hacks from the hack database in
// the prompt. Below the leap it answers clean without asking (reason says
// so). A reply it cannot parse, an HTTP error or a timeout is unsure with
// the reason; never clean.
//
// The reply must contain "VERDICT: hack|clean|unsure" (or a JSON object with
// "verdict"), and may contain "REASON: ..." and "CONFIDENCE: 0.x".
//
// Who calls it: the detector actor, one candidate at a time (it blocks for
// up to timeout_ms). Not thread-safe (the per-task best).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "actors/detector/detector.hpp"
#include "actors/detector/detector_options.hpp"
#include "storage/hack_db.hpp"

namespace crucible::detector {

class judge_detector final : public detector {
 public:
  // hacks: where similar known hacks come from; may be null (no examples).
  // The API key is options.api_key, else the variable options.api_key_env.
  judge_detector(judge_options options, std::function<result<std::vector<storage::similar_hack>>(const std::string& code, std::size_t k)> hacks);

  verdict examine(const detect_input& in) override;
  std::string describe() const override;

 private:
  judge_options options_;
  std::function<result<std::vector<storage::similar_hack>>(const std::string&, std::size_t)> hacks_;
  std::string api_key_;
  std::map<std::string, double> best_;  // the best speedup seen per task
};

// The similar-hacks source over a hack database directory: opens it
// read-only for each call (so it sees what the live owner wrote since), and
// finds no hacks when the directory does not exist yet.
std::function<result<std::vector<storage::similar_hack>>(const std::string&, std::size_t)> hacks_from_directory(
    std::string dir);

// The prompt's messages, as an OpenAI "messages" array in JSON text (for tests).
std::string judge_messages_json(const detect_input& in, const std::vector<storage::similar_hack>& examples,
                                std::size_t max_code_chars);

// The reply text of an OpenAI chat completion body (choices[0].message.content),
// what examine() reads from the endpoint's HTTP 200 answer. Errors: corrupt
// with nlohmann's reason when the body is not JSON or lacks that string.
result<std::string> chat_completion_text(const std::string& body);

// Parses a chat reply's text into kind, reason and confidence (unsure with
// "unparseable reply: ..." when no verdict is found).
verdict parse_judge_reply(const std::string& text);

}  // namespace crucible::detector
