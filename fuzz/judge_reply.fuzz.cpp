// Feeds: what the judge's chat endpoint answers (actors/detector/
// judge_detector.hpp): the input as the HTTP 200 body through
// chat_completion_text (nlohmann: choices[0].message.content), the text it
// yields through parse_judge_reply, and the input itself as reply text too
// (a body's content is JSON-escaped, which the fuzzer would rarely get right).
// Checks: no crash, uncaught exception or sanitizer report; every verdict is
// clean, hack or unsure with a confidence in [0, 1].
#include <cstdlib>
#include <string>

#include "actors/detector/judge_detector.hpp"

namespace {

void check(const crucible::detector::verdict& v) {
  using crucible::detector::verdict_kind;
  if (v.kind != verdict_kind::clean && v.kind != verdict_kind::hack && v.kind != verdict_kind::unsure) std::abort();
  if (!(v.confidence >= 0 && v.confidence <= 1)) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string input(reinterpret_cast<const char*>(data), size);
  if (auto text = crucible::detector::chat_completion_text(input)) check(crucible::detector::parse_judge_reply(*text));
  check(crucible::detector::parse_judge_reply(input));
  return 0;
}
