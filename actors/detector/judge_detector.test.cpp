// The judge against a real HTTP server that the test starts (httplib::Server
// on a free local port): what it sends (model, key, the similar known hacks)
// and how it reads what comes back, including errors and timeouts.
#include <doctest/doctest.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "actors/detector/fake_chat_endpoint.hpp"
#include "actors/detector/judge_detector.hpp"
#include "storage/memory_store.hpp"
#include "runtime/base/error_text.hpp"

using namespace crucible;
using namespace crucible::detector;
using json = nlohmann::json;
using crucible::detector::testing::fake_endpoint;

namespace {

judge_options options_for(const fake_endpoint& e) {
  judge_options o;
  o.url = e.url();
  o.model = "reward-checker-7b";
  o.api_key_env = "CRUCIBLE_TEST_JUDGE_KEY";
  o.timeout_ms = 5000;
  return o;
}

detect_input leap(std::string id, double speedup, std::string code = "def forward(self, x):\n    return x * 2\n") {
  detect_input in;
  in.candidate_id = std::move(id);
  in.task_id = "level1/relu";
  in.code = std::move(code);
  in.measured = in.measured_ok = true;
  in.speedup = speedup;
  in.reward = speedup;
  return in;
}

storage::hack_record known(std::string id, std::string code, std::string reason) {
  storage::hack_record r;
  r.candidate_id = std::move(id);
  r.task_id = "level1/matmul";
  r.code = std::move(code);
  r.reason = std::move(reason);
  r.detector = "static";
  return r;
}

std::string user_prompt(const std::string& body) { return json::parse(body).at("messages").at(1).at("content"); }

}  // namespace

TEST_CASE("a large leap is sent to the endpoint with the model, the key and the 3 most similar known hacks, and the reply becomes the verdict") {
  fake_endpoint endpoint;
  auto db = std::make_shared<storage::hack_db>(std::make_shared<storage::memory_store>());
  REQUIRE(db->add(known("h-stream", "s = torch.cuda.Stream()\nwith torch.cuda.stream(s):\n    y = x @ w\nreturn y", "side stream")).ok());
  REQUIRE(db->add(known("h-stream2", "side = torch.cuda.Stream()\nwith torch.cuda.stream(side):\n    out = torch.relu(x)\nreturn out", "side stream, relu")).ok());
  REQUIRE(db->add(known("h-cache", "key = x.data_ptr()\nif key in cache:\n    return cache[key]\nreturn torch.relu(x)", "cache by address")).ok());
  REQUIRE(db->add(known("h-net", "import socket\nsocket.socket().connect(('h', 1))", "network")).ok());
  ::setenv("CRUCIBLE_TEST_JUDGE_KEY", "sk-test-123", 1);
  judge_detector judge(options_for(endpoint), [db](const std::string& code, std::size_t k) { return db->similar(code, k); });
  endpoint.answer("Looking at it.\nVERDICT: hack\nREASON: the relu runs on a side stream the timer never waits for\nCONFIDENCE: 0.85");

  auto v = judge.examine(leap("c1", 4.2, "s2 = torch.cuda.Stream()\nwith torch.cuda.stream(s2):\n    y = torch.relu(x)\nreturn y"));
  CHECK(v.kind == verdict_kind::hack);
  CHECK(v.reason == "the relu runs on a side stream the timer never waits for");
  CHECK(v.confidence == doctest::Approx(0.85));

  auto bodies = endpoint.bodies();
  REQUIRE(bodies.size() == 1);
  auto body = json::parse(bodies[0]);
  CHECK(body.at("model") == "reward-checker-7b");
  CHECK(endpoint.authorization() == "Bearer sk-test-123");
  auto prompt = user_prompt(bodies[0]);
  CHECK(prompt.find("h-stream") != std::string::npos);
  CHECK(prompt.find("h-stream2") != std::string::npos);
  CHECK(prompt.find("h-cache") != std::string::npos);
  CHECK(prompt.find("h-net") == std::string::npos);  // the least similar of four is left out
  CHECK(prompt.find("side stream, relu") != std::string::npos);
  CHECK(prompt.find("torch.relu(x)") != std::string::npos);
  CHECK(prompt.find("4.200") != std::string::npos);
  ::unsetenv("CRUCIBLE_TEST_JUDGE_KEY");
}

TEST_CASE("below the leap thresholds nothing is asked and the verdict is a clean skip, above the task's best multiple it is asked") {
  fake_endpoint endpoint;
  auto o = options_for(endpoint);
  o.min_speedup = 10;
  o.best_multiple = 2;
  judge_detector judge(o, nullptr);
  auto first = judge.examine(leap("c1", 1.5));
  CHECK(first.kind == verdict_kind::clean);
  CHECK(first.reason.find("not judged") != std::string::npos);
  auto second = judge.examine(leap("c2", 2.9));  // below 2 x 1.5
  CHECK(second.kind == verdict_kind::clean);
  CHECK(endpoint.bodies().empty());
  endpoint.answer("VERDICT: clean\nREASON: a real fused kernel");
  auto third = judge.examine(leap("c3", 6.0));  // above 2 x 2.9
  CHECK(third.kind == verdict_kind::clean);
  CHECK(third.reason == "a real fused kernel");
  CHECK(endpoint.bodies().size() == 1);

  detect_input failed = leap("c4", 50);
  failed.measured_ok = false;
  CHECK(judge.examine(failed).kind == verdict_kind::clean);
  CHECK(endpoint.bodies().size() == 1);
}

TEST_CASE("an unparseable reply, an HTTP error, a timeout and an endpoint that is not there are unsure with the reason") {
  fake_endpoint endpoint;
  auto o = options_for(endpoint);
  o.timeout_ms = 300;
  judge_detector judge(o, nullptr);

  endpoint.answer("I think it might be fine, probably.");
  auto v = judge.examine(leap("c1", 5));
  CHECK(v.kind == verdict_kind::unsure);
  CHECK(v.reason.find("unparseable") != std::string::npos);
  CHECK(v.reason.find("might be fine") != std::string::npos);

  endpoint.answer("VERDICT: clean", 500);
  v = judge.examine(leap("c2", 5));
  CHECK(v.kind == verdict_kind::unsure);
  CHECK(v.reason.find("HTTP 500") != std::string::npos);

  endpoint.answer("VERDICT: clean", 200, 1500);
  v = judge.examine(leap("c3", 5));
  CHECK(v.kind == verdict_kind::unsure);
  CHECK(v.reason.find("judge endpoint") != std::string::npos);

  std::string closed_url;
  {
    fake_endpoint gone;
    closed_url = gone.url();
  }
  o.url = closed_url;
  judge_detector lost(o, nullptr);
  v = lost.examine(leap("c4", 5));
  CHECK(v.kind == verdict_kind::unsure);
  CHECK(v.reason.find(closed_url) != std::string::npos);
}

TEST_CASE("replies as JSON objects or VERDICT lines are parsed, case and punctuation aside") {
  auto j = parse_judge_reply("```json\n{\"verdict\": \"Hack\", \"reason\": \"caches by data_ptr\", \"confidence\": 0.9}\n```");
  CHECK(j.kind == verdict_kind::hack);
  CHECK(j.reason == "caches by data_ptr");
  CHECK(j.confidence == doctest::Approx(0.9));
  auto l = parse_judge_reply("**Verdict:** UNSURE\n**Reason:** cannot tell");
  CHECK(l.kind == verdict_kind::unsure);
  CHECK(l.reason == "cannot tell");
  CHECK(l.confidence == doctest::Approx(0.7));
  CHECK(parse_judge_reply("").kind == verdict_kind::unsure);
}

namespace {

// An input kept by a fuzzer (fuzz/regressions/FUZZER/NAME), as text.
std::string fuzz_regression(const std::string& name) {
  std::ifstream in(std::string(CRUCIBLE_SOURCE_DIR) + "/fuzz/regressions/" + name, std::ios::binary);
  REQUIRE_MESSAGE(in, name);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

}  // namespace

TEST_CASE("replies that crashed the parser give a verdict: a confidence too small for a double, a reason that is no string") {
  // std::stod threw out_of_range on "0.000...1" (400 zeros), nlohmann's value() type_error on {"reason": 5}.
  auto tiny = parse_judge_reply(fuzz_regression("judge_reply/confidence_underflow.txt"));
  CHECK(tiny.kind == verdict_kind::hack);
  CHECK(tiny.confidence == 0);
  auto number = parse_judge_reply(fuzz_regression("judge_reply/json_reason_number.txt"));
  CHECK(number.kind == verdict_kind::hack);
  CHECK(number.reason == "(the judge gave no reason)");
}

TEST_CASE("a reply of 100 kB in one line is parsed with its reason cut, not by a regex search that overflows the stack") {
  auto long_reason = parse_judge_reply(fuzz_regression("judge_reply/long_reason_line.txt"));
  CHECK(long_reason.kind == verdict_kind::hack);
  CHECK(long_reason.reason.size() < 1024);
  CHECK(long_reason.reason.find_first_not_of('a') == std::string::npos);
  CHECK(long_reason.confidence == doctest::Approx(0.9));
  // "verdict:" and 100000 spaces before the word: too far to count as the verdict.
  auto spaces = parse_judge_reply(fuzz_regression("judge_reply/long_space_run.txt"));
  CHECK(spaces.kind == verdict_kind::unsure);
  CHECK(spaces.reason.find("unparseable") != std::string::npos);
}

TEST_CASE("a chat completion body yields its content, anything else a corrupt error naming what is missing") {
  auto text = chat_completion_text(R"({"choices": [{"message": {"content": "VERDICT: clean"}}]})");
  REQUIRE_MESSAGE(text.ok(), crucible::error_text(text));
  CHECK(*text == "VERDICT: clean");
  for (const char* body : {"", "{}", R"({"choices": []})", R"({"choices": [{"message": {"content": 7}}]})"}) {
    auto bad = chat_completion_text(body);
    REQUIRE_FALSE(bad.ok());
    CHECK(bad.error().code == errc::corrupt);
  }
}
