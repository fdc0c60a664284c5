#include "actors/rollout/extract.hpp"

#include <doctest/doctest.h>

using namespace crucible::rollout;

TEST_CASE("the code is the last python block after the last '## Code Implementation' heading") {
  std::string c =
      "## Performance Analysis\nslow loop\n```python\nprint('analysis')\n```\n"
      "## Algorithm Design\nfuse\n"
      "## Code Implementation\nFirst try:\n```python\nx = 1\n```\nBetter:\n```Python\nclass ModelNew:\n    pass\n```\n"
      "```cpp\nint main() {}\n```\nDone.";
  auto e = extract_code(c);
  REQUIRE(e.code);
  CHECK(*e.code == "class ModelNew:\n    pass\n");
  CHECK(e.reason.empty());
}

TEST_CASE("an untagged block, CRLF line ends, an indented fence and a heading with a colon all count") {
  auto e = extract_code("## Code Implementation:\r\n  ```\r\nimport torch\r\n```\r\n");
  REQUIRE(e.code);
  CHECK(*e.code == "import torch\n");
  auto py = extract_code("## Code Implementation\n```py\na = 1\n\nb = 2\n```");
  REQUIRE(py.code);
  CHECK(*py.code == "a = 1\n\nb = 2\n");
}

TEST_CASE("malformed completions have no code, each with its reason") {
  auto none = extract_code("I would write:\n```python\nclass ModelNew: pass\n```\n");
  CHECK(!none.code);
  CHECK(none.reason == "no code: no '## Code Implementation' section");

  auto no_block = extract_code("## Code Implementation\nclass ModelNew: pass\n");
  CHECK(!no_block.code);
  CHECK(no_block.reason == "no code: no fenced python block after '## Code Implementation'");

  auto other_language = extract_code("## Code Implementation\n```cpp\n__global__ void k() {}\n```\n");
  CHECK(other_language.reason == "no code: no fenced python block after '## Code Implementation'");

  // Cut by max_new_tokens: the final block never closes, even after a complete one.
  auto cut = extract_code("## Code Implementation\n```python\na = 1\n```\n```python\nclass ModelNew:\n    def");
  CHECK(!cut.code);
  CHECK(cut.reason == "no code: the code block is never closed");

  auto empty = extract_code("## Code Implementation\n```python\n\n   \n```\n");
  CHECK(!empty.code);
  CHECK(empty.reason == "no code: the code block is empty");

  // Code before the heading does not count.
  auto before = extract_code("```python\nclass ModelNew: pass\n```\n## Code Implementation\nnothing here");
  CHECK(!before.code);

  // A heading quoted inside a block is not the section.
  auto quoted = extract_code("```\n## Code Implementation\n```\n");
  CHECK(quoted.reason == "no code: no '## Code Implementation' section");

  CHECK(extract_code("").reason == "no code: no '## Code Implementation' section");
  CHECK(!extract_code("### Code Implementation\n```python\na=1\n```\n").code);
}
