#include "actors/rollout/prompt.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "actors/rollout/builtin_prompt.hpp"

namespace crucible::rollout {

namespace {

using node = prompt_template::node;

const std::vector<std::string_view>& top_fields() {
  static const std::vector<std::string_view> f{"task_id", "task_description", "reference_code", "platform"};
  return f;
}
const std::vector<std::string_view>& exemplar_fields() {
  static const std::vector<std::string_view> f{"index", "score", "bucket", "code"};
  return f;
}
bool contains(const std::vector<std::string_view>& v, std::string_view s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

int line_of(std::string_view text, std::size_t pos) {
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

// Whether the tag at [open, close) stands alone on its line; if so, where
// the line starts and where the next one begins.
bool standalone(std::string_view text, std::size_t open, std::size_t close, std::size_t& line_start,
                std::size_t& next_line) {
  std::size_t s = open;
  while (s > 0 && (text[s - 1] == ' ' || text[s - 1] == '\t')) --s;
  if (s > 0 && text[s - 1] != '\n') return false;
  std::size_t e = close;
  while (e < text.size() && (text[e] == ' ' || text[e] == '\t')) ++e;
  if (e < text.size() && text[e] != '\n') return false;
  line_start = s;
  next_line = e < text.size() ? e + 1 : e;
  return true;
}

void append_text(std::vector<node>& to, std::string_view text) {
  if (text.empty()) return;
  if (!to.empty() && to.back().type == node::kind::text)
    to.back().value.append(text);
  else
    to.push_back({node::kind::text, std::string(text), {}});
}

std::string score_text(double score) { return fmt::format("{:.2f}", score); }

void render_into(const std::vector<node>& nodes, const prompt_fields& f, const prompt_exemplar* ex, std::size_t index,
                 std::string& out) {
  for (const auto& n : nodes) {
    switch (n.type) {
      case node::kind::text: out += n.value; break;
      case node::kind::field:
        if (n.value == "task_id") out += f.task_id;
        else if (n.value == "task_description") out += f.task_description;
        else if (n.value == "reference_code") out += f.reference_code;
        else if (n.value == "platform") out += f.platform;
        else if (n.value == "index") out += std::to_string(index);
        else if (n.value == "score") out += score_text(ex->score);
        else if (n.value == "bucket") out += std::to_string(ex->bucket);
        else if (n.value == "code") out += ex->code;
        break;
      case node::kind::each_exemplar:
        for (std::size_t i = 0; i < f.exemplars.size(); ++i) render_into(n.children, f, &f.exemplars[i], i + 1, out);
        break;
      case node::kind::no_exemplar:
        if (f.exemplars.empty()) render_into(n.children, f, nullptr, 0, out);
        break;
    }
  }
}

std::string trim_trailing_newlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

}  // namespace

result<prompt_template> prompt_template::parse(std::string_view text, const std::string& source) {
  prompt_template t;
  t.source_ = source;
  // The open sections: their nodes (the root first) and where they opened.
  std::vector<std::vector<node>> stack(1);
  std::vector<std::pair<node::kind, std::size_t>> open_sections;
  auto fail = [&](std::size_t pos, const std::string& what) -> error {
    return make_error(errc::invalid_argument, fmt::format("{}:{}: {}", source, line_of(text, pos), what));
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t open = text.find("{{", pos);
    if (open == std::string_view::npos) {
      append_text(stack.back(), text.substr(pos));
      break;
    }
    std::size_t close = text.find("}}", open + 2);
    if (close == std::string_view::npos) return fail(open, "'{{' without a closing '}}'");
    std::string_view tag = text.substr(open + 2, close - open - 2);
    close += 2;
    char sigil = tag.empty() ? '\0' : tag.front();
    bool section = sigil == '#' || sigil == '^' || sigil == '/';
    std::size_t text_end = open, resume = close;
    if (section) standalone(text, open, close, text_end, resume);
    append_text(stack.back(), text.substr(pos, text_end - pos));
    pos = resume;
    if (section) {
      std::string_view name = tag.substr(1);
      if (name != "exemplars")
        return fail(open, "unknown section '" + std::string(name) + "' (only 'exemplars' is a section)");
      if (sigil == '/') {
        if (open_sections.empty()) return fail(open, "'{{/exemplars}}' closes no section");
        node n{open_sections.back().first, {}, std::move(stack.back())};
        stack.pop_back();
        open_sections.pop_back();
        stack.back().push_back(std::move(n));
      } else {
        if (!open_sections.empty()) return fail(open, "sections cannot nest");
        open_sections.push_back({sigil == '#' ? node::kind::each_exemplar : node::kind::no_exemplar, open});
        stack.emplace_back();
      }
      continue;
    }
    bool in_exemplar = !open_sections.empty() && open_sections.back().first == node::kind::each_exemplar;
    if (contains(exemplar_fields(), tag) && !in_exemplar)
      return fail(open, "'{{" + std::string(tag) + "}}' is an exemplar field: use it inside {{#exemplars}}");
    if (!contains(exemplar_fields(), tag) && !contains(top_fields(), tag))
      return fail(open, "unknown field '{{" + std::string(tag) +
                            "}}' (fields: task_id, task_description, reference_code, platform; in "
                            "{{#exemplars}}: index, score, bucket, code)");
    stack.back().push_back({node::kind::field, std::string(tag), {}});
  }
  if (!open_sections.empty()) return fail(open_sections.back().second, "section '{{#exemplars}}' is never closed");
  t.nodes_ = std::move(stack.front());
  return t;
}

result<prompt_template> prompt_template::load(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::not_found, "prompt template '" + path.string() + "' cannot be read");
  std::stringstream s;
  s << in.rdbuf();
  if (in.bad()) return make_error(errc::io, "reading prompt template '" + path.string() + "' failed");
  return parse(s.str(), path.string());
}

const prompt_template& prompt_template::builtin() {
  static const prompt_template t = [] {
    auto parsed = parse(builtin_prompt_text, "configs/prompts/contrastive.md (built in)");
    CRUCIBLE_CHECK(parsed.ok(), "the built-in prompt template parses");
    return *parsed;
  }();
  return t;
}

result<prompt_template> prompt_template::load_or_builtin(const std::string& path) {
  if (path.empty()) return builtin();
  return load(path);
}

std::string prompt_template::render(const prompt_fields& fields) const {
  prompt_fields f = fields;
  f.reference_code = trim_trailing_newlines(f.reference_code);
  for (auto& e : f.exemplars) e.code = trim_trailing_newlines(e.code);
  std::string out;
  render_into(nodes_, f, nullptr, 0, out);
  return out;
}

std::string task_description(std::string_view code) {
  auto docstring_after = [&](std::size_t from) -> std::string {
    std::size_t q = code.find("\"\"\"", from);
    if (q == std::string_view::npos) return {};
    std::size_t body = q + 3;
    std::size_t end = code.find("\"\"\"", body);
    if (end == std::string_view::npos) return {};
    std::string_view doc = code.substr(body, end - body);
    std::size_t first = doc.find_first_not_of(" \t\r\n");
    if (first == std::string_view::npos) return {};
    doc = doc.substr(first);
    std::size_t eol = doc.find('\n');
    std::string line(doc.substr(0, eol));
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    return line;
  };
  std::size_t cls = code.find("class Model(");
  if (cls != std::string_view::npos) {
    // Only a docstring that opens the class body counts.
    std::size_t colon = code.find(':', cls);
    std::size_t next = colon == std::string_view::npos ? colon : code.find_first_not_of(" \t\r\n", colon + 1);
    if (next != std::string_view::npos && code.compare(next, 3, "\"\"\"") == 0) return docstring_after(next);
  }
  std::size_t first = code.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && code.compare(first, 3, "\"\"\"") == 0) return docstring_after(first);
  return {};
}

}  // namespace crucible::rollout
