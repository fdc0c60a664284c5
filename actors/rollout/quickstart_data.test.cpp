// The quick-start's shipped data (tools/quickstart/): the seed corpus and
// the tokenizer trained for it.
#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "actors/policy/tokenizer.hpp"
#include "actors/rollout/extract.hpp"
#include "actors/rollout/prompt.hpp"

using namespace crucible;

namespace {
const std::string root = CRUCIBLE_SOURCE_DIR;
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
}  // namespace

TEST_CASE("every seed example's completion extracts to its variant's code, and its prompt is the compact template's, with and without previous codes") {
  std::ifstream in(root + "/configs/quickstart/seed.jsonl");
  REQUIRE(in);
  auto tpl = rollout::prompt_template::load(root + "/configs/prompts/compact.md");
  REQUIRE(tpl.ok());
  std::string line;
  int n = 0, incorrect = 0, with_exemplars = 0;
  std::map<std::string, std::set<std::string>> variants_of_task;
  std::map<std::string, std::pair<std::string, std::set<std::string>>> variants_after_prompt;  // prompt -> task, variants
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    std::string task = j["task"], variant = j["variant"];
    CAPTURE(task);
    CAPTURE(variant);
    auto code = rollout::extract_code(j["completion"].get<std::string>());
    REQUIRE(code.code);
    CHECK(*code.code == read(root + "/configs/tasks/" + task + "/" + variant + ".py"));
    std::string reference = read(root + "/configs/tasks/" + task + "/task.py");
    std::vector<rollout::prompt_exemplar> shown;
    for (const auto& x : j["exemplars"])
      shown.push_back({read(root + "/configs/tasks/" + task + "/" + x["variant"].get<std::string>() + ".py"),
                       x["score"].get<double>(), 0});
    with_exemplars += !shown.empty();
    CHECK(j["prompt"] == tpl->render({task, rollout::task_description(reference), reference, "CPU", std::move(shown)}));
    incorrect += variant == "incorrect";
    variants_of_task[task].insert(variant);
    auto& after = variants_after_prompt[j["prompt"].get<std::string>()];
    after.first = task;
    after.second.insert(variant);
    ++n;
  }
  CHECK(n >= 40);
  CHECK(incorrect >= 4);
  // Every example also with previous codes (the contrastive prompt), and
  // every prompt followed by every variant of its task alike: stage 1 must
  // not tie the variant to the previous codes shown (docs/benchmarks.md).
  CHECK(with_exemplars >= 3 * (n - with_exemplars));
  for (const auto& [prompt, after] : variants_after_prompt) {
    CAPTURE(prompt.substr(0, 200));
    CHECK(after.second == variants_of_task[after.first]);
  }
}

TEST_CASE("the quick-start tokenizer encodes and decodes the seed corpus exactly, in fewer tokens than bytes") {
  auto tok = policy::tokenizer::load(root + "/configs/quickstart/policy/tokenizer.json");
  REQUIRE(tok.ok());
  std::ifstream in(root + "/configs/quickstart/seed.jsonl");
  std::string line;
  std::size_t bytes = 0, tokens = 0;
  while (std::getline(in, line)) {
    auto j = nlohmann::json::parse(line);
    std::string text = j["prompt"].get<std::string>() + j["completion"].get<std::string>();
    auto ids = tok->encode(text);
    REQUIRE(ids.ok());
    CHECK(tok->decode(*ids) == text);
    bytes += text.size();
    tokens += ids->size();
  }
  CHECK(tokens * 3 < bytes);
  auto eos = tok->encode("<|endoftext|>", {.add_special_tokens = false});
  REQUIRE(eos.ok());
  CHECK(*eos == std::vector<std::int32_t>{1023});
}
