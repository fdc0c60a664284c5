#include "actors/policy/tokenizer.hpp"

#include <doctest/doctest.h>

#include <algorithm>

#include "actors/policy/test_support.hpp"
#include "actors/policy/tokenizer_test_support.hpp"
#include "runtime/base/error_text.hpp"

namespace crucible::policy {
namespace {

using ids = std::vector<std::int32_t>;
using nlohmann::json;
using testing::added;
using testing::byte_level_tokenizer;
using testing::qwen2_style;

tokenizer make(const json& j) {
  auto t = tokenizer::parse(j.dump(), "test/tokenizer.json");
  REQUIRE_MESSAGE(t.ok(), crucible::error_text(t));
  return *t;
}

ids encode(const tokenizer& t, std::string_view text, bool add_special = true) {
  auto r = t.encode(text, {.add_special_tokens = add_special});
  REQUIRE_MESSAGE(r.ok(), crucible::error_text(r));
  return *r;
}

std::string load_error(const json& j) {
  auto t = tokenizer::parse(j.dump(), "test/tokenizer.json");
  if (t.ok()) return "";
  CHECK(t.error().code == errc::invalid_argument);
  CHECK(t.error().message.find("test/tokenizer.json") != std::string::npos);
  return t.error().message;
}

TEST_CASE("BPE applies the lowest-ranked merge first") {
  // "b c" before "a b": abc -> a + bc.
  auto bc_first = make(byte_level_tokenizer({{"b", "c"}, {"a", "b"}}));
  CHECK(encode(bc_first, "abc") == ids{'a', 256});
  // "a b" before "b c": abc -> ab + c.
  auto ab_first = make(byte_level_tokenizer({{"a", "b"}, {"b", "c"}}));
  CHECK(encode(ab_first, "abc") == ids{256, 'c'});
  // Merges of merged tokens: bc, then a+bc.
  auto chained = make(byte_level_tokenizer({{"b", "c"}, {"a", "b"}, {"a", "bc"}}));
  CHECK(encode(chained, "abc") == ids{258});
  CHECK(encode(chained, "abcab") == ids{258, 257});
}

TEST_CASE("BPE merges equal-ranked pairs from the left") {
  auto t = make(byte_level_tokenizer({{"a", "a"}}));
  CHECK(encode(t, "aaa") == ids{256, 'a'});
  CHECK(encode(t, "aaaa") == ids{256, 256});
}

TEST_CASE("merges in the legacy \"a b\" form and the [a, b] form give the same ids") {
  const std::vector<std::pair<std::string, std::string>> merges{{" ", "t"}, {"h", "e"}, {" t", "he"}};
  auto lists = make(byte_level_tokenizer(merges, /*legacy_merges=*/false));
  auto legacy = make(byte_level_tokenizer(merges, /*legacy_merges=*/true));
  CHECK(encode(lists, "in the end") == encode(legacy, "in the end"));
  CHECK(encode(lists, "in the end") == ids{'i', 'n', 258, ' ', 'e', 'n', 'd'});
}

TEST_CASE("spaces and non-ASCII text become byte tokens through ByteLevel") {
  auto t = make(byte_level_tokenizer({}));
  CHECK(encode(t, "hi there") == ids{'h', 'i', ' ', 't', 'h', 'e', 'r', 'e'});
  CHECK(encode(t, "é") == ids{0xC3, 0xA9});
  CHECK(encode(t, "😀") == ids{0xF0, 0x9F, 0x98, 0x80});
  CHECK(encode(t, "") == ids{});
  CHECK(t.id_to_token(' ') == "Ġ");
  CHECK(t.token_to_id("Ċ") == '\n');
}

TEST_CASE("decoding byte tokens that are not whole UTF-8 gives one replacement character per broken sequence") {
  auto t = make(byte_level_tokenizer({}));
  CHECK(t.decode(ids{0xF0, 0x9F}) == "\uFFFD");
  CHECK(t.decode(ids{'a', 0xFF, 'b'}) == "a\uFFFDb");
  CHECK(t.decode(ids{0xE2, 0x82, 'x'}) == "\uFFFDx");
  CHECK(t.decode(ids{'o', 'k', 99999}) == "ok");  // unknown ids are skipped
}

TEST_CASE("special tokens are split out before pre-tokenization and kept or skipped when decoding") {
  auto j = qwen2_style(byte_level_tokenizer({{"h", "i"}}));
  j["added_tokens"] = {added(257, "<|endoftext|>", true), added(258, "<|im_start|>", true), added(259, "<|im_end|>", true)};
  auto t = make(j);
  CHECK(encode(t, "hi<|endoftext|>hi") == ids{256, 257, 256});
  CHECK(encode(t, "<|im_start|>user\nhi<|im_end|>") ==
        ids{258, 'u', 's', 'e', 'r', '\n', 256, 259});
  CHECK(encode(t, "<|im_start|") == ids{'<', '|', 'i', 'm', '_', 's', 't', 'a', 'r', 't', '|'});
  const ids sample{258, 256, 259};
  CHECK(t.decode(sample) == "<|im_start|>hi<|im_end|>");
  CHECK(t.decode(sample, {.skip_special_tokens = true}) == "hi");
  CHECK(t.is_special(257));
  CHECK(!t.is_special(256));
  CHECK(t.token_to_id("<|im_end|>") == 259);
  CHECK(t.vocab_size() == 260);
}

TEST_CASE("added tokens take the ids tokenizers assigns, whatever id the file states") {
  // tokenizers adds them one by one: a token the model knows keeps the
  // model's id, a new one gets the next id after the vocabulary.
  auto j = byte_level_tokenizer({{"h", "i"}});
  j["added_tokens"] = {added(900, "<|endoftext|>", true), added(5, "hi", false), added(3, "<|x|>", true)};
  auto t = make(j);
  CHECK(t.token_to_id("<|endoftext|>") == 257);
  CHECK(t.token_to_id("hi") == 256);
  CHECK(t.token_to_id("<|x|>") == 258);
  CHECK(encode(t, "<|x|>hi") == ids{258, 256});
}

TEST_CASE("the longest added token wins where two start at the same place") {
  auto j = byte_level_tokenizer({});
  j["added_tokens"] = {added(256, "<a>", true), added(257, "<a><b>", true)};
  auto t = make(j);
  CHECK(encode(t, "x<a><b><a>") == ids{'x', 257, 256});
}

TEST_CASE("lstrip, rstrip and single_word change how added tokens match") {
  auto j = byte_level_tokenizer({});
  j["added_tokens"] = {added(256, "<mask>", true, false, /*lstrip=*/true, false),
                       added(257, "<sep>", true, false, false, /*rstrip=*/true),
                       added(258, "yes", false, false, false, false, /*single_word=*/true)};
  auto t = make(j);
  CHECK(encode(t, "a  <mask>") == ids{'a', 256});          // the spaces before go with the token
  CHECK(encode(t, "<sep>  b") == ids{257, 'b'});           // the spaces after go with the token
  CHECK(encode(t, "say yes") == ids{'s', 'a', 'y', ' ', 258});
  CHECK(encode(t, "eyes") == ids{'e', 'y', 'e', 's'});    // inside a word: not the added token
}

TEST_CASE("a normalized added token matches the normalized text") {
  auto j = byte_level_tokenizer({});
  j["normalizer"] = {{"type", "NFC"}};
  j["added_tokens"] = {added(256, "cafe\u0301", false, /*normalized=*/true)};
  auto t = make(j);
  CHECK(encode(t, "a café") == ids{'a', ' ', 256});
  CHECK(encode(t, "a cafe\u0301") == ids{'a', ' ', 256});
}

TEST_CASE("the NFC normalizer composes combining marks before BPE") {
  auto nfc = make(qwen2_style(byte_level_tokenizer({})));
  auto plain = make(byte_level_tokenizer({}));
  CHECK(encode(nfc, "e\u0301") == ids{0xC3, 0xA9});
  CHECK(encode(plain, "e\u0301") == ids{'e', 0xCC, 0x81});
  CHECK(nfc.decode(encode(nfc, "e\u0301")) == "é");
  auto j = byte_level_tokenizer({});
  j["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFKC"}}}}};
  CHECK(encode(make(j), "ﬁ") == ids{'f', 'i'});
}

TEST_CASE("the Qwen2 split keeps digits apart and GPT-2's ByteLevel keeps them together") {
  auto j = qwen2_style(byte_level_tokenizer({{"1", "2"}}));
  CHECK(encode(make(j), "12") == ids{'1', '2'});
  CHECK(encode(make(byte_level_tokenizer({{"1", "2"}})), "12") == ids{256});
}

TEST_CASE("ByteLevel's add_prefix_space gives the first word a leading space") {
  auto j = byte_level_tokenizer({{" ", "h"}, {" h", "i"}});
  j["pre_tokenizer"]["add_prefix_space"] = true;
  auto t = make(j);
  CHECK(encode(t, "hi") == ids{257});
  CHECK(encode(t, " hi") == ids{257});
  CHECK(t.decode(encode(t, "hi")) == " hi");
}

TEST_CASE("a template post-processor adds a leading special token only when asked") {
  auto j = byte_level_tokenizer({});
  j["added_tokens"] = {added(256, "<|begin_of_text|>", true)};
  j["post_processor"] = json::parse(R"({"type": "Sequence", "processors": [
      {"type": "ByteLevel", "trim_offsets": false},
      {"type": "TemplateProcessing",
       "single": [{"SpecialToken": {"id": "<|begin_of_text|>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
       "pair": [],
       "special_tokens": {"<|begin_of_text|>": {"id": "<|begin_of_text|>", "ids": [256], "tokens": ["<|begin_of_text|>"]}}}]})");
  auto t = make(j);
  CHECK(encode(t, "hi") == ids{256, 'h', 'i'});
  CHECK(encode(t, "hi", /*add_special=*/false) == ids{'h', 'i'});
  CHECK(encode(t, "") == ids{256});
}

TEST_CASE("ignore_merges takes a whole word from the vocabulary") {
  auto j = byte_level_tokenizer({{"a", "b"}});
  j["model"]["vocab"]["abc"] = 400;
  CHECK(encode(make(j), "abc") == ids{256, 'c'});
  j["model"]["ignore_merges"] = true;
  CHECK(encode(make(j), "abc") == ids{400});
}

TEST_CASE("unknown characters become the unk token, fused when fuse_unk is set") {
  json j = {{"model", {{"type", "BPE"}, {"vocab", {{"a", 0}, {"<unk>", 1}}}, {"merges", json::array()}, {"unk_token", "<unk>"}}}};
  CHECK(encode(make(j), "abba") == ids{0, 1, 1, 0});
  j["model"]["fuse_unk"] = true;
  CHECK(encode(make(j), "abba") == ids{0, 1, 0});
  j["model"].erase("unk_token");
  CHECK(encode(make(j), "abba") == ids{0, 0});  // dropped, as tokenizers drops them
}

TEST_CASE("decode of encode gives back awkward text") {
  auto plain = make(byte_level_tokenizer({{" ", " "}, {"e", "r"}, {" ", "t"}, {"\xE6", "\xBC"}}));
  auto j = qwen2_style(byte_level_tokenizer({{" ", " "}, {"e", "r"}, {" ", "t"}}));
  j["added_tokens"] = {added(259, "<|endoftext|>", true)};
  auto qwen = make(j);
  for (const char* text : {"", " ", "   leading and trailing   ", "tabs\t\tand\nnew\r\nlines\n\n\n",
                           "CJK 漢字とかな, emoji 😀👍🏽 and flags 🇫🇷", "combining é and ñ and 각",
                           "they're I'M we'll 'tis", "digits 1234567890 ١٢٣", "<|endoftext|>text<|endoftext|>",
                           "mixed \u00A0nbsp\u3000ideographic space", "x\u0085y"}) {
    CHECK_MESSAGE(plain.decode(encode(plain, text)) == text, text);
    CHECK_MESSAGE(qwen.decode(encode(qwen, text)) == text, text);
  }
}

TEST_CASE("repeated words give the same ids as the first time (the BPE cache)") {
  auto t = make(byte_level_tokenizer({{"t", "h"}, {"th", "e"}, {" ", "the"}}));
  const ids once = encode(t, "the the");
  std::string many;
  for (int i = 0; i < 2000; ++i) many += "the the ";
  const ids all = encode(t, many);
  REQUIRE(once == ids{257, 258});
  REQUIRE(all.size() == 4001);  // "the", 3999 x " the", " "
  CHECK(ids(all.begin(), all.begin() + 2) == once);
  CHECK(std::count(all.begin(), all.end(), 258) == 3999);
  CHECK(all.back() == ' ');
}

TEST_CASE("text that is not UTF-8 is refused") {
  auto t = make(byte_level_tokenizer({}));
  auto r = t.encode("\xC3\x28");
  REQUIRE(!r.ok());
  CHECK(r.error().code == errc::invalid_argument);
}

TEST_CASE("unsupported tokenizer features are refused naming the file and the field") {
  auto j = byte_level_tokenizer({});
  j["model"]["type"] = "WordPiece";
  CHECK(load_error(j).find("model.type") != std::string::npos);
  j = byte_level_tokenizer({});
  j["normalizer"] = {{"type", "Lowercase"}};
  CHECK(load_error(j).find("normalizer.type") != std::string::npos);
  j = byte_level_tokenizer({});
  j["normalizer"] = {{"type", "Sequence"}, {"normalizers", {{{"type", "NFC"}}, {{"type", "Strip"}}}}};
  CHECK(load_error(j).find("normalizer.normalizers[1].type") != std::string::npos);
  j = byte_level_tokenizer({});
  j["pre_tokenizer"] = {{"type", "Metaspace"}};
  CHECK(load_error(j).find("pre_tokenizer.type") != std::string::npos);
  j = byte_level_tokenizer({});
  j["decoder"] = {{"type", "WordPiece"}};
  CHECK(load_error(j).find("decoder.type") != std::string::npos);
  j = byte_level_tokenizer({});
  j["post_processor"] = {{"type", "BertProcessing"}};
  CHECK(load_error(j).find("post_processor.type") != std::string::npos);
  j = byte_level_tokenizer({});
  j["model"]["dropout"] = 0.1;
  CHECK(load_error(j).find("model.dropout") != std::string::npos);
  j = byte_level_tokenizer({});
  j["model"]["merges"] = {"a zz"};
  CHECK(load_error(j).find("model.merges[0]") != std::string::npos);
  j = byte_level_tokenizer({});
  j["model"]["merges"] = {"abc"};
  CHECK(load_error(j).find("model.merges[0]") != std::string::npos);
  j = byte_level_tokenizer({});
  j["truncation"] = {{"max_length", 8}};
  CHECK(load_error(j).find("field truncation") != std::string::npos);
  j = qwen2_style(byte_level_tokenizer({}));
  j["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = "(";
  CHECK(load_error(j).find("pre_tokenizer.pretokenizers[0].pattern.Regex") != std::string::npos);
  j = byte_level_tokenizer({});
  j.erase("model");
  CHECK(load_error(j).find("field model") != std::string::npos);
}

TEST_CASE("loading a tokenizer from a folder reads its tokenizer.json") {
  testing::scratch_dir dir;
  auto missing = tokenizer::load(dir.path());
  REQUIRE(!missing.ok());
  CHECK(missing.error().code == errc::not_found);
  testing::write_file(dir / "tokenizer.json", byte_level_tokenizer({{"h", "i"}}).dump());
  auto t = tokenizer::load(dir.path());
  REQUIRE_MESSAGE(t.ok(), crucible::error_text(t));
  CHECK(encode(*t, "hi") == ids{256});
  CHECK(t->source() == (dir / "tokenizer.json").string());
}

TEST_CASE("a template whose special token has a negative id is refused naming the field") {
  // Found with fuzz/tokenizer.fuzz.cpp: ids: [-7] loaded, and encode() returned -7.
  auto kept = testing::read_file(std::filesystem::path(CRUCIBLE_SOURCE_DIR) / "fuzz/regressions/tokenizer/template_negative_id.json");
  REQUIRE_FALSE(kept.empty());
  auto t = tokenizer::parse(kept, "test/tokenizer.json");
  REQUIRE_FALSE(t.ok());
  CHECK(t.error().code == errc::invalid_argument);
  CHECK(t.error().message.find("field post_processor.special_tokens.<s>.ids holds -7") != std::string::npos);
}

}  // namespace
}  // namespace crucible::policy
