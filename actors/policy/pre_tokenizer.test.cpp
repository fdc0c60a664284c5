#include "actors/policy/pre_tokenizer.hpp"

#include <doctest/doctest.h>

#include "actors/policy/tokenizer_test_support.hpp"
#include "runtime/base/error_text.hpp"

namespace crucible::policy::detail {
namespace {

using pieces = std::vector<std::string>;

split_step regex_step(std::string_view pattern, split_behavior behavior = split_behavior::isolated, bool invert = false) {
  auto re = regex::compile(pattern);
  REQUIRE_MESSAGE(re.ok(), crucible::error_text(re));
  split_step s;
  s.pattern = std::make_shared<const regex>(std::move(*re));
  s.behavior = behavior;
  s.invert = invert;
  return s;
}

pieces qwen2(std::string_view text) { return split_pieces(regex_step(testing::kQwen2Pattern), text); }
pieces gpt2(std::string_view text) { return split_pieces(regex_step(kGpt2Pattern), text); }

TEST_CASE("the Qwen2 pattern splits contractions case-insensitively and keeps a leading space on words") {
  CHECK(qwen2("I'm don't") == pieces{"I", "'m", " don", "'t"});
  CHECK(qwen2("WE'LL SEE") == pieces{"WE", "'LL", " SEE"});
  CHECK(gpt2("WE'LL") == pieces{"WE", "'", "LL"});  // GPT-2's contractions are case-sensitive
}

TEST_CASE("the Qwen2 pattern splits digits one by one where GPT-2 keeps runs") {
  CHECK(qwen2("x=12345") == pieces{"x", "=", "1", "2", "3", "4", "5"});
  CHECK(gpt2("x=12345") == pieces{"x", "=", "12345"});
  CHECK(gpt2("a 2024") == pieces{"a", " 2024"});
}

TEST_CASE("the Qwen2 pattern leaves the last space of a run to the next word") {
  CHECK(qwen2("a   b") == pieces{"a", "  ", " b"});
  CHECK(qwen2("a\n\n b") == pieces{"a", "\n\n", " b"});
  CHECK(qwen2("end  ") == pieces{"end", "  "});
  CHECK(qwen2("Hello world!!!\n") == pieces{"Hello", " world", "!!!\n"});
  CHECK(qwen2("\tx") == pieces{"\tx"});
  CHECK(gpt2("a   b") == pieces{"a", "  ", " b"});
  CHECK(gpt2("\tx") == pieces{"\t", "x"});
}

TEST_CASE("letters and numbers are Unicode classes in both patterns") {
  CHECK(qwen2("漢字かな 42") == pieces{"漢字かな", " ", "4", "2"});
  CHECK(gpt2("naïve café") == pieces{"naïve", " café"});
  CHECK(gpt2("٣٤ x") == pieces{"٣٤", " x"});  // Arabic-Indic digits are \p{N}
}

TEST_CASE("the next-line character U+0085 counts as whitespace, as in Oniguruma") {
  CHECK(gpt2("x\u0085!") == pieces{"x", "\u0085", "!"});
}

TEST_CASE("split behaviors cut around matches as tokenizers does") {
  CHECK(split_pieces(regex_step("-", split_behavior::removed), "a-b--c") == pieces{"a", "b", "c"});
  CHECK(split_pieces(regex_step("-", split_behavior::isolated), "a-b--c") == pieces{"a", "-", "b", "-", "-", "c"});
  CHECK(split_pieces(regex_step("-", split_behavior::merged_with_previous), "a-b--c") == pieces{"a-", "b-", "-", "c"});
  CHECK(split_pieces(regex_step("-", split_behavior::merged_with_next), "a-b--c") == pieces{"a", "-b", "-", "-c"});
  CHECK(split_pieces(regex_step("-", split_behavior::contiguous), "a-b--c") == pieces{"a", "-", "b", "--", "c"});
  CHECK(split_pieces(regex_step("-", split_behavior::removed, /*invert=*/true), "a-b--c") == pieces{"-", "-", "-"});
  split_step literal;
  literal.literal = "ab";
  CHECK(split_pieces(literal, "xabyab") == pieces{"x", "ab", "y", "ab"});
}

TEST_CASE("ByteLevel maps bytes to printable characters and can add a prefix space") {
  auto p = pre_tokenizer::from_steps({byte_level_step{.add_prefix_space = true, .use_regex = true}});
  REQUIRE(p.ok());
  std::vector<std::string> out;
  p->run("hi there\n", out);
  CHECK(out == pieces{"Ġhi", "Ġthere", "Ċ"});
  out.clear();
  p->run(" é", out);
  CHECK(out == pieces{"ĠÃ©"});
}

TEST_CASE("a long whitespace run splits like a short one") {
  const std::string run(200000, ' ');
  CHECK(qwen2("a" + run + "b") == pieces{"a", run.substr(1), " b"});
  CHECK(gpt2(run) == pieces{run});
}

TEST_CASE("a regex that does not compile is refused with its offset") {
  auto re = regex::compile("(unclosed");
  REQUIRE(!re.ok());
  CHECK(re.error().message.find("offset") != std::string::npos);
}

}  // namespace
}  // namespace crucible::policy::detail
