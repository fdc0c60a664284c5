#include "actors/rollout/prompt.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

using namespace crucible::rollout;

namespace {
std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}
const std::string tasks = std::string(CRUCIBLE_SOURCE_DIR) + "/configs/tasks";
}  // namespace

TEST_CASE("a template renders fields, one block per exemplar, and drops lines that hold only a section tag") {
  auto t = prompt_template::parse("T {{task_id}} on {{platform}}\n"
                                  "{{#exemplars}}\n"
                                  "#{{index}} score {{score}} bucket {{bucket}}\n{{code}}\n"
                                  "{{/exemplars}}\n"
                                  "{{^exemplars}}\n"
                                  "none\n"
                                  "{{/exemplars}}\n"
                                  "ref:\n{{reference_code}}\nend",
                                  "t.md");
  REQUIRE_MESSAGE(t.ok(), (t.ok() ? std::string() : t.error().text()));
  prompt_fields f{"cpu/x", "desc", "import torch\n\n", "CPU", {{"a = 1\n", 1.234, 3}, {"b = 2", 0.5, 0}}};
  CHECK(t->render(f) == "T cpu/x on CPU\n#1 score 1.23 bucket 3\na = 1\n#2 score 0.50 bucket 0\nb = 2\nref:\nimport torch\nend");
  f.exemplars.clear();
  CHECK(t->render(f) == "T cpu/x on CPU\nnone\nref:\nimport torch\nend");
}

TEST_CASE("a bad template is refused naming the file, the line and the tag") {
  auto unknown = prompt_template::parse("line one\n{{task}}\n", "bad.md");
  REQUIRE(!unknown.ok());
  CHECK(unknown.error().message.find("bad.md:2: unknown field '{{task}}'") == 0);
  auto outside = prompt_template::parse("{{code}}", "bad.md");
  REQUIRE(!outside.ok());
  CHECK(outside.error().message.find("exemplar field") != std::string::npos);
  auto unclosed = prompt_template::parse("a\n{{#exemplars}}\n{{code}}\n", "bad.md");
  REQUIRE(!unclosed.ok());
  CHECK(unclosed.error().message.find("bad.md:2: section '{{#exemplars}}' is never closed") == 0);
  CHECK(!prompt_template::parse("{{/exemplars}}", "bad.md").ok());
  CHECK(!prompt_template::parse("{{#tasks}}{{/tasks}}", "bad.md").ok());
  CHECK(!prompt_template::parse("{{#exemplars}}{{^exemplars}}{{/exemplars}}{{/exemplars}}", "bad.md").ok());
  CHECK(!prompt_template::parse("{{task_id", "bad.md").ok());
  auto missing = prompt_template::load("/nonexistent/prompt.md");
  REQUIRE(!missing.ok());
  CHECK(missing.error().message.find("/nonexistent/prompt.md") != std::string::npos);
}

TEST_CASE("the built-in template is configs/prompts/contrastive.md and has every part of the paper's Table 3") {
  auto file = prompt_template::load(std::string(CRUCIBLE_SOURCE_DIR) + "/configs/prompts/contrastive.md");
  REQUIRE_MESSAGE(file.ok(), (file.ok() ? std::string() : file.error().text()));
  std::string reference = read(tasks + "/cpu/gelu_tanh/task.py");
  prompt_fields f{"cpu/gelu_tanh", task_description(reference), reference, "CPU",
                  {{"class ModelNew: fast\n", 1.31, 13}, {"class ModelNew: slow\n", 0.82, 8}}};
  std::string p = prompt_template::builtin().render(f);
  CHECK(p == file->render(f));
  // Task description and reference code.
  CHECK(p.find("task cpu/gelu_tanh: GELU, tanh approximation, as a chain of elementwise operations.") !=
        std::string::npos);
  CHECK(p.find("```python\n" + reference.substr(0, reference.size() - 1) + "\n```") != std::string::npos);
  // Previous codes with their scores, in the order the store gave them.
  auto fast = p.find("### Previous code 1 (score 1.31)\n```python\nclass ModelNew: fast\n```");
  auto slow = p.find("### Previous code 2 (score 0.82)\n```python\nclass ModelNew: slow\n```");
  CHECK(fast != std::string::npos);
  CHECK(slow > fast);
  CHECK(p.find("(none yet for this task)") == std::string::npos);
  // The generation protocol's three sections, in order, after the codes.
  auto analysis = p.find("\n## Performance Analysis\n");
  auto design = p.find("\n## Algorithm Design\n");
  auto code = p.find("\n## Code Implementation\n");
  CHECK(analysis > slow);
  CHECK(design > analysis);
  CHECK(code > design);
  // Requirements and restrictions.
  CHECK(p.find("identical to the reference's") != std::string::npos);
  CHECK(p.find("otherwise the score is 0") != std::string::npos);
  CHECK(p.find("No caching") != std::string::npos);
  CHECK(p.find("Keep every hyperparameter unchanged") != std::string::npos);
  CHECK(p.find("{{") == std::string::npos);
  f.exemplars.clear();
  CHECK(prompt_template::builtin().render(f).find("(none yet for this task)") != std::string::npos);
}

TEST_CASE("a task's description is the first line of Model's docstring") {
  CHECK(task_description("import torch\nclass Model(nn.Module):\n    \"\"\"Sum of products.\n\n    More.\"\"\"\n") ==
        "Sum of products.");
  CHECK(task_description("\"\"\"Module doc.\"\"\"\nclass Model(nn.Module):\n    def f(self): pass\n") == "Module doc.");
  CHECK(task_description("class Model(nn.Module):\n    def forward(self, x):\n        \"\"\"not this\"\"\"\n") == "");
  CHECK(task_description("") == "");
}
