// The chat-template renderer against jinja2 rendering the way transformers
// does (tests/data/chat_templates/render_like_transformers.py, Debian's
// python3-jinja2), on the real templates of Qwen2.5 and Llama 3.1 / 3.2
// Instruct and on single constructs; plus errors and the config files.
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "actors/policy/chat_template.hpp"
#include "runtime/base/error_text.hpp"

namespace {

using crucible::policy::chat_format;
using crucible::policy::chat_message;
using crucible::policy::chat_template;
using json = nlohmann::json;

const std::filesystem::path data_dir = std::filesystem::path(CRUCIBLE_SOURCE_DIR) / "tests/data/chat_templates";

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// jinja2's results for `cases` (see render_like_transformers.py).
json reference(const json& cases) {
  auto file = std::filesystem::temp_directory_path() / ("chat_template_cases_" + std::to_string(::getpid()) + ".json");
  std::ofstream(file) << cases.dump();
  std::string command = "/usr/bin/python3 " + (data_dir / "render_like_transformers.py").string() + " " + file.string();
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(command.c_str(), "r"), ::pclose);
  REQUIRE(pipe);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, pipe.get())) out.append(buf, n);
  std::filesystem::remove(file);
  auto results = json::parse(out, nullptr, false);
  REQUIRE_MESSAGE(results.is_array(), "python3-jinja2 missing? (tools/setup.sh installs it) output: " << out);
  REQUIRE(results.size() == cases.size());
  return results;
}

chat_template family(const std::string& name) {
  auto t = chat_template::from_tokenizer_config(read(data_dir / name / "tokenizer_config.json"), name);
  REQUIRE_MESSAGE(t.ok(), crucible::error_text(t));
  REQUIRE(t->has_value());
  return **t;
}

json message(const std::string& role, const std::string& content) { return {{"role", role}, {"content", content}}; }

// Conversations every family is rendered with.
std::vector<json> conversations() {
  const std::string code = "Write a kernel.\n\n```python\nclass Model:\n    def f(self): return {'a': \"{{ x }}\"}\n```\n";
  std::vector<json> out;
  for (bool generation : {true, false}) {
    out.push_back({{"messages", {message("system", "You write CUDA."), message("user", "Hi")}}, {"add_generation_prompt", generation}});
    out.push_back({{"messages", {message("user", code)}}, {"add_generation_prompt", generation}});
    out.push_back({{"messages", {message("system", "  padded system \n"), message("user", "A"), message("assistant", "B"),
                                  message("user", "héllo – 世界 \"quoted\" 'single' \\n")}},
                   {"add_generation_prompt", generation}});
  }
  json weather = {{"type", "function"},
                  {"function",
                   {{"name", "get_weather"},
                    {"description", "Weather, in °C"},
                    {"parameters", {{"type", "object"}, {"properties", {{"city", {{"type", "string"}}}}}, {"required", {"city"}}}}}}};
  out.push_back({{"messages", {message("user", "Weather in Paris?")}}, {"tools", {weather}}, {"add_generation_prompt", true}});
  json call = {{"role", "assistant"},
               {"content", ""},
               {"tool_calls", {{{"type", "function"}, {"function", {{"name", "get_weather"}, {"arguments", {{"city", "Paris"}, {"days", 2.5}}}}}}}}};
  out.push_back({{"messages", {message("user", "Weather?"), call, message("tool", "21"), message("tool", "sunny"), message("user", "thanks")}},
                 {"add_generation_prompt", true}});
  return out;
}

void check_family(const std::string& name) {
  chat_template t = family(name);
  json cases = json::array();
  for (auto& variables : conversations()) cases.push_back({{"folder", (data_dir / name).string()}, {"variables", variables}});
  json expected = reference(cases);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(i);
    CAPTURE(cases[i]["variables"].dump());
    auto got = t.render_json(cases[i]["variables"].dump());
    if (expected[i].contains("error")) {
      CHECK_MESSAGE(!got.ok(), "jinja2 failed with " << expected[i]["error"]);
      continue;
    }
    REQUIRE_MESSAGE(got.ok(), crucible::error_text(got));
    CHECK(*got == expected[i]["text"].get<std::string>());
  }
}

}  // namespace

TEST_CASE("Qwen2.5's chat template renders as transformers renders it") { check_family("qwen2.5"); }
TEST_CASE("Llama 3.1's chat template renders as transformers renders it") { check_family("llama3.1"); }
TEST_CASE("Llama 3.2's chat template, with strftime_now's date, renders as transformers renders it") { check_family("llama3.2"); }

// golden.json: transformers' apply_chat_template on the H200
// (tools/gpu/chat_template_check.py), text and ids.
TEST_CASE("the chat templates give transformers' token ids over the folders' tokenizers") {
  const auto golden_file = data_dir / "golden.json";
  if (!std::filesystem::exists(golden_file)) {
    MESSAGE("no " << golden_file.string() << " yet: run tools/gpu/chat_template_check.py where transformers is");
    return;
  }
  auto golden = json::parse(read(golden_file));
  REQUIRE(golden["cases"].size() > 0);
  for (const auto& c : golden["cases"]) {
    const std::string name = c["family"];
    CAPTURE(name);
    CAPTURE(c["variables"].dump());
    auto tok = crucible::policy::tokenizer::load(data_dir / name);
    REQUIRE_MESSAGE(tok.ok(), crucible::error_text(tok));
    auto text = family(name).render_json(c["variables"].dump());
    REQUIRE_MESSAGE(text.ok(), crucible::error_text(text));
    CHECK(*text == c["text"].get<std::string>());
    auto ids = tok->encode(*text, {.add_special_tokens = false});
    REQUIRE(ids.ok());
    CHECK(*ids == c["ids"].get<std::vector<std::int32_t>>());
  }
}

TEST_CASE("apply wraps a prompt as one user turn and opens the assistant's") {
  auto text = family("qwen2.5").apply({{"user", "Hi"}}, true);
  REQUIRE(text.ok());
  CHECK(*text ==
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  auto llama = family("llama3.1").apply({{"system", "S"}, {"user", "Hi"}}, false);
  REQUIRE(llama.ok());
  CHECK(*llama ==
        "<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nCutting Knowledge Date: December 2023\n"
        "Today Date: 26 Jul 2024\n\nS<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
}

TEST_CASE("single constructs render as jinja2 renders them") {
  const std::vector<std::string> templates = {
      "{{ s[1:] }}|{{ s[:2] }}|{{ s[:-1] }}|{{ s[-2:] }}|{{ s[::-1] }}|{{ s[4:2] }}|{{ s[10:] }}|{{ items[1:] | length }}",
      "{{ 7 % 3 }} {{ -7 % 3 }} {{ 7 // 2 }} {{ -7 // 2 }} {{ 1 / 2 }} {{ 2 - 5 }} {{ 3 * 4 }} {{ -1 }} {{ 10 - -2 }} {{ 2 ** 10 }}",
      "{{ 0.1 + 0.2 }} {{ 1e16 }} {{ 1e15 }} {{ 0.0001 }} {{ 0.00001 }} {{ 2.0 }} {{ -1.5e-7 }} {{ 3.0 * 2 }}",
      "{{ nope is defined }} {{ s is string }} {{ d is mapping }} {{ nothing is none }} {{ n is number }} {{ true is number }}"
      " {{ items is iterable }} {{ nope is iterable }} {{ 4 is divisibleby 2 }} {{ 3 is odd }} {{ 'x' is in 'xy' }}",
      "{{ nope or 'fb' }} {{ zero or 'fb' }} {{ s and 'last' }} {{ '' and 'never' }} {{ not items }} {{ 'b' in d }} {{ 'q' not in s }}",
      "{{ d | tojson }} {{ d | tojson(indent=2) }} {{ items | tojson }} {{ [] | tojson(indent=4) }} {{ {'é': [1.5, none, true, '\\n\"']} | tojson }}"
      " {{ d | tojson(sort_keys=true) }}",
      "{% for k, v in d | items %}{{ loop.index }}{{ k }}={{ v }}{% if not loop.last %}, {% endif %}{% endfor %}",
      "{% for x in items if x != 'y' %}{{ loop.index0 }}{{ x }}{{ loop.length }}{{ loop.first }}{{ loop.last }}{% else %}none{% endfor %}"
      "{% for x in [] %}a{% else %}empty{% endfor %}",
      "{% set ns = namespace(found=false, n=0) %}{% for x in items %}{% set ns.n = ns.n + 1 %}{% if x == 'z' %}{% set ns.found = true %}{% endif %}"
      "{% endfor %}{{ ns.found }} {{ ns.n }}",
      "{% set x = 0 %}{% for i in [1, 2] %}{{ x }}{% set x = i %}{% endfor %}{{ x }}{% if true %}{% set y = 5 %}{% endif %}{{ y }}",
      "  {% if true %}\n  x\n  {% endif %}\n y\n{%- if true -%}\n  z  \n{%- endif %}\n{{- ' w ' -}}\n  {# c #}\nv {#- c -#}  u\n{%+ if true +%}\nkeep\n{% endif %}",
      "{{ '  a b  '.strip() }}|{{ 'xay'.strip('xy') }}|{{ 'abc'.startswith('ab') }}|{{ 'abc'.endswith(('x', 'c')) }}|"
      "{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'Hi'.upper() }}{{ 'Hi'.lower() }}|{{ 'hello world'.title() }}|"
      "{{ 'aXbX'.replace('X', '-') }}|{{ d.get('a') }}{{ d.get('q', 7) }}|{{ d.keys() | list }}",
      "{{ s | upper }} {{ '  t  ' | trim }} {{ items | join(', ') }} {{ items | first }}{{ items | last }} {{ nope | default('dflt') }}"
      " {{ items | reject('equalto', 'y') | list }} {{ items | select('in', ['x', 'z']) | list }} {{ n | string }} {{ '42' | int + 1 }}"
      " {{ [{'a': 1}, {'a': 2}] | map(attribute='a') | list }} {{ s | length }} {{ 'é中' | length }}",
      "{{ 'a' if n > 3 else 'b' }}{{ 'c' if n < 3 }}|{{ n ~ s ~ nothing }}|{{ [1, 2] + [3] }}|{{ 'ab' * 2 }}|{{ (1, 2)[1] }}"
      "|{{ items[-1] }}{{ items.0 }}|{{ d['a'] }}{{ d.b }}|{{ none }}{{ true }}|{{ nope }}|{{ 1 < 2 < 3 }}",
      "{% for i in range(3) %}{% if i == 1 %}{% continue %}{% endif %}{{ i }}{% if i == 2 %}{% break %}{% endif %}{% endfor %}"
      "{% set block %}in {{ s }}{% endset %}[{{ block }}]{{ loop is defined }}",
      "{{ 'x' ~ undefined_thing ~ 'y' }}{{ 'a' 'b' }}{{ \"\\u00e9\\t\\x41\" }}",
  };
  json variables = {{"s", "abcdef"}, {"items", {"x", "y", "z"}}, {"n", 7}, {"zero", 0}, {"d", {{"b", 2}, {"a", 1}}}, {"nothing", nullptr}};
  json cases = json::array();
  for (const auto& t : templates) cases.push_back({{"template", t}, {"variables", variables}});
  json expected = reference(cases);
  for (std::size_t i = 0; i < templates.size(); ++i) {
    CAPTURE(templates[i]);
    auto t = chat_template::parse(templates[i], "case");
    REQUIRE_MESSAGE(t.ok(), crucible::error_text(t));
    auto got = t->render_json(variables.dump());
    REQUIRE_MESSAGE(expected[i].contains("text"), expected[i].dump());
    REQUIRE_MESSAGE(got.ok(), crucible::error_text(got));
    CHECK(*got == expected[i]["text"].get<std::string>());
  }
}

TEST_CASE("transformers' generation marker renders its body") {
  auto t = chat_template::parse("a{% generation %}{{ messages[0].content }}{% endgeneration %}b", "t");
  REQUIRE(t.ok());
  auto text = t->apply({{"assistant", "x"}}, false);
  REQUIRE(text.ok());
  CHECK(*text == "axb");
}

TEST_CASE("a template that does not parse names its line and column") {
  struct bad {
    std::string source, message;
  };
  const std::vector<bad> cases = {
      {"a\n{% if x %}\nb\n", "t:3:2: missing {% endif %}"},  // the trailing newline is dropped, as jinja2 does
      {"{{ 'open }}", "t:1:4: unterminated string"},
      {"x\n  {% macro m() %}{% endmacro %}", "t:2:6: unsupported statement 'macro'"},
      {"{{ a + }}", "t:1:8: unexpected '}}'"},
      {"{% for x of y %}{% endfor %}", "t:1:10: expected 'in' in a for statement, got 'of'"},
      {"{{ x ", "t:1:6: missing }} at the end of the template"},
      {"{# never closed", "t:1:1: missing end of comment tag"},
      {"{% endif %}", "t:1:4: unsupported statement 'endif'"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.source);
    auto t = chat_template::parse(c.source, "t");
    REQUIRE_FALSE(t.ok());
    CHECK(t.error().message == c.message);
  }
}

TEST_CASE("a template that fails while rendering says where and why, as jinja2 fails") {
  struct bad {
    std::string source, message;
  };
  const std::vector<bad> cases = {
      {"ok\n{{ raise_exception('Conversation roles must alternate') }}", "t:2:4: Conversation roles must alternate"},
      {"{{ 1 + nope }}", "t:1:6: 'nope' is undefined"},
      {"{{ nope.attr }}", "t:1:8: 'nope' is undefined"},
      {"{{ 'a' + 1 }}", "t:1:8: unsupported operand type(s) for +: 'str' and 'int'"},
      {"{{ x | frobnicate }}", "t:1:8: no filter named 'frobnicate'"},
      {"{% for m in none %}{% endfor %}", "t:1:13: 'NoneType' object is not iterable"},
      {"{% set n = 3 %}{% set n.x = 1 %}", "t:1:19: cannot assign attribute on non-namespace object 'n'"},
      {"{{ 1 // 0 }}", "t:1:6: integer division or modulo by zero"},
  };
  json cases_json = json::array();
  for (const auto& c : cases) cases_json.push_back({{"template", c.source}, {"variables", json::object()}});
  json expected = reference(cases_json);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    CAPTURE(cases[i].source);
    CHECK_MESSAGE(expected[i].contains("error"), "jinja2 rendered it: " << expected[i].dump());
    auto t = chat_template::parse(cases[i].source, "t");
    REQUIRE(t.ok());
    auto got = t->render_json("{}");
    REQUIRE_FALSE(got.ok());
    CHECK(got.error().message == cases[i].message);
  }
  auto llama = family("llama3.1").render_json(R"({"messages": [{"role": "system", "content": "S"}], "tools": [{"name": "f"}]})");
  REQUIRE_FALSE(llama.ok());
  CHECK(llama.error().message.find("Cannot put tools in the first user message when there's no first user message!") !=
        std::string::npos);
}

TEST_CASE("tokenizer_config.json: a template string, a list with a default, none, or an error naming the file") {
  auto listed = chat_template::from_tokenizer_config(
      R"({"eos_token": {"content": "</s>", "lstrip": false}, "chat_template": [{"name": "tool_use", "template": "T"},
          {"name": "default", "template": "{{ messages[0].content }}{{ eos_token }}"}]})",
      "cfg.json");
  REQUIRE(listed.ok());
  REQUIRE(listed->has_value());
  auto text = (*listed)->apply({{"user", "hi"}}, true);
  REQUIRE(text.ok());
  CHECK(*text == "hi</s>");

  auto none = chat_template::from_tokenizer_config(R"({"eos_token": "</s>"})", "cfg.json");
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());

  auto no_default = chat_template::from_tokenizer_config(R"({"chat_template": [{"name": "rag", "template": "x"}]})", "cfg.json");
  REQUIRE_FALSE(no_default.ok());
  CHECK(no_default.error().message == "cfg.json: chat_template lists no template named \"default\"");
  auto bad_type = chat_template::from_tokenizer_config(R"({"chat_template": 3})", "cfg.json");
  REQUIRE_FALSE(bad_type.ok());
  CHECK(bad_type.error().message == "cfg.json: chat_template is neither a string nor a list of templates");
  auto bad_syntax = chat_template::from_tokenizer_config(R"({"chat_template": "{% if %}"})", "cfg.json");
  REQUIRE_FALSE(bad_syntax.ok());
  CHECK(bad_syntax.error().message == "cfg.json chat_template:1:7: unexpected '%}'");
  CHECK_FALSE(chat_template::from_tokenizer_config("{", "cfg.json").ok());
}

TEST_CASE("a model folder's chat format: the template and generation_config's stop ids") {
  auto qwen = crucible::policy::load_chat_format(data_dir / "qwen2.5");
  REQUIRE_MESSAGE(qwen.ok(), crucible::error_text(qwen));
  CHECK(qwen->chat.has_value());
  CHECK(qwen->stop_token_ids == std::vector<std::int32_t>{151645, 151643});
  auto llama = crucible::policy::load_chat_format(data_dir / "llama3.1");
  REQUIRE(llama.ok());
  CHECK(llama->stop_token_ids == std::vector<std::int32_t>{128001, 128008, 128009});

  auto dir = std::filesystem::temp_directory_path() / ("chat_format_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto empty = crucible::policy::load_chat_format(dir);
  REQUIRE(empty.ok());
  CHECK_FALSE(empty->chat.has_value());
  CHECK_FALSE(empty->stop_token_ids.has_value());
  CHECK(crucible::policy::describe(*empty) == "no chat template");

  std::ofstream(dir / "generation_config.json") << R"({"eos_token_id": 7})";
  auto one = crucible::policy::load_chat_format(dir);
  REQUIRE(one.ok());
  CHECK(one->stop_token_ids == std::vector<std::int32_t>{7});
  std::ofstream(dir / "generation_config.json") << R"({"eos_token_id": ["x"]})";
  auto bad = crucible::policy::load_chat_format(dir);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message == (dir / "generation_config.json").string() +
                                   ": eos_token_id is neither a token id nor a list of them");
  std::filesystem::remove_all(dir);
}
