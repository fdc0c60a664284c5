// Lexer and parser of the Jinja subset (jinja_template.hpp). Whitespace
// control follows jinja2's lexer: {%- and {{- strip all whitespace before the
// tag, -%} and -}} all whitespace after; with lstrip_blocks, the spaces and
// tabs between a line's start and a {% or {# tag go; with trim_blocks, one
// newline after %} or #} goes. Newlines are normalised to \n and one trailing
// newline of the source is dropped, as jinja2 does by default.
#include <cctype>
#include <cstdlib>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "actors/policy/jinja_ast.hpp"
#include "actors/policy/unicode.hpp"

namespace crucible::policy::jinja {

namespace {

struct syntax_error {
  position at;
  std::string message;
};

struct token {
  enum class kind { text, variable_begin, variable_end, block_begin, block_end, name, string, integer, number, op, eof };
  kind type = kind::eof;
  std::string text;
  value constant;
  position at;
};

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

class lexer {
 public:
  lexer(std::string source, const environment_options& options) : src_(std::move(source)), options_(options) {}

  std::vector<token> run() {
    while (pos_ < src_.size()) {
      std::size_t start = find_tag(pos_);
      std::string text = src_.substr(pos_, start == std::string::npos ? std::string::npos : start - pos_);
      if (start == std::string::npos) {
        emit_text(std::move(text), pos_);
        break;
      }
      char kind = src_[start + 1];
      char modifier = start + 2 < src_.size() ? src_[start + 2] : '\0';
      if (modifier == '-') {
        while (!text.empty() && is_space(text.back())) text.pop_back();
      } else if (modifier != '+' && options_.lstrip_blocks && kind != '{') {
        std::size_t line_start = text.rfind('\n');
        line_start = line_start == std::string::npos ? 0 : line_start + 1;
        bool only_space = line_start < text.size();
        for (std::size_t i = line_start; i < text.size(); ++i) only_space = only_space && is_space(text[i]);
        if ((line_start > 0 || line_starting_) && only_space) text.resize(line_start);
      }
      emit_text(std::move(text), pos_);
      pos_ = start + 2 + ((modifier == '-' || modifier == '+') ? 1 : 0);
      if (kind == '#') {
        skip_comment(start);
      } else {
        tokens_.push_back({kind == '{' ? token::kind::variable_begin : token::kind::block_begin, "", {}, at(start)});
        lex_tag(kind == '{' ? '}' : '%');
      }
    }
    tokens_.push_back({token::kind::eof, "", {}, at(src_.size())});
    return std::move(tokens_);
  }

  position at(std::size_t offset) const {
    position p;
    for (std::size_t i = 0; i < offset && i < src_.size(); ++i) {
      if (src_[i] == '\n') {
        ++p.line;
        p.column = 1;
      } else {
        ++p.column;
      }
    }
    return p;
  }

 private:
  std::size_t find_tag(std::size_t from) const {
    for (std::size_t i = from; i + 1 < src_.size(); ++i)
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    return std::string::npos;
  }

  void emit_text(std::string text, std::size_t offset) {
    if (!text.empty()) tokens_.push_back({token::kind::text, std::move(text), {}, at(offset)});
  }

  // After a tag's closing marker: -%} eats all whitespace, %} (trim_blocks)
  // and #} one newline.
  void after_end(char modifier, bool block) {
    line_starting_ = false;
    if (modifier == '-') {
      while (pos_ < src_.size() && is_space(src_[pos_])) line_starting_ = src_[pos_++] == '\n';
    } else if (modifier != '+' && block && options_.trim_blocks && pos_ < src_.size() && src_[pos_] == '\n') {
      ++pos_;
      line_starting_ = true;
    }
  }

  void skip_comment(std::size_t start) {
    std::size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) throw syntax_error{at(start), "missing end of comment tag"};
    char modifier = end > pos_ && (src_[end - 1] == '-' || src_[end - 1] == '+') ? src_[end - 1] : '\0';
    pos_ = end + 2;
    after_end(modifier, true);
  }

  void lex_tag(char closer) {
    int depth = 0;  // open ( [ {: a } inside them is no end of tag
    const bool block = closer == '%';
    for (;;) {
      while (pos_ < src_.size() && is_space(src_[pos_])) ++pos_;
      if (pos_ >= src_.size()) throw syntax_error{at(pos_), block ? "missing %} at the end of the template" : "missing }} at the end of the template"};
      auto ends_here = [&](std::size_t p) { return p + 1 < src_.size() && src_[p] == closer && src_[p + 1] == '}'; };
      if (depth == 0) {
        char modifier = src_[pos_];
        if ((modifier == '-' || modifier == '+') && ends_here(pos_ + 1)) {
          tokens_.push_back({block ? token::kind::block_end : token::kind::variable_end, "", {}, at(pos_)});
          pos_ += 3;
          after_end(modifier, block);
          return;
        }
        if (ends_here(pos_)) {
          tokens_.push_back({block ? token::kind::block_end : token::kind::variable_end, "", {}, at(pos_)});
          pos_ += 2;
          after_end('\0', block);
          return;
        }
      }
      lex_one(depth);
    }
  }

  void lex_one(int& depth) {
    const std::size_t start = pos_;
    char c = src_[pos_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      while (pos_ < src_.size() && (std::isalnum(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) ++pos_;
      tokens_.push_back({token::kind::name, src_.substr(start, pos_ - start), {}, at(start)});
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      lex_number();
    } else if (c == '\'' || c == '"') {
      lex_string(c);
    } else {
      static const char* ops[] = {"//", "**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "%", "~", "<", ">",
                                  "=", ".", ",", ":", "|", "(", ")", "[", "]", "{", "}"};
      for (const char* op : ops) {
        std::string_view o(op);
        if (src_.compare(pos_, o.size(), o) == 0) {
          if (o == "(" || o == "[" || o == "{") ++depth;
          if (o == ")" || o == "]" || o == "}") --depth;
          pos_ += o.size();
          tokens_.push_back({token::kind::op, std::string(o), {}, at(start)});
          return;
        }
      }
      throw syntax_error{at(start), fmt::format("unexpected character '{}'", c)};
    }
  }

  void lex_number() {
    const std::size_t start = pos_;
    bool is_float = false;
    auto digits = [&] {
      while (pos_ < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_')) ++pos_;
    };
    digits();
    if (pos_ + 1 < src_.size() && src_[pos_] == '.' && std::isdigit(static_cast<unsigned char>(src_[pos_ + 1]))) {
      is_float = true;
      ++pos_;
      digits();
    }
    if (pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      std::size_t p = pos_ + 1;
      if (p < src_.size() && (src_[p] == '+' || src_[p] == '-')) ++p;
      if (p < src_.size() && std::isdigit(static_cast<unsigned char>(src_[p]))) {
        is_float = true;
        pos_ = p;
        digits();
      }
    }
    std::string text;
    for (std::size_t i = start; i < pos_; ++i)
      if (src_[i] != '_') text += src_[i];
    token t{is_float ? token::kind::number : token::kind::integer, text, {}, at(start)};
    t.constant = is_float ? value::number(std::strtod(text.c_str(), nullptr))
                          : value::integer(std::strtoll(text.c_str(), nullptr, 10));
    tokens_.push_back(std::move(t));
  }

  // Python's unicode-escape decoding of the literal's body, as jinja2 does;
  // an unknown escape stays as written.
  void lex_string(char quote) {
    const std::size_t start = pos_++;
    std::string out;
    for (;;) {
      if (pos_ >= src_.size()) throw syntax_error{at(start), "unterminated string"};
      char c = src_[pos_++];
      if (c == quote) break;
      if (c != '\\' || pos_ >= src_.size()) {
        out += c;
        continue;
      }
      char e = src_[pos_++];
      auto hex = [&](int n) {
        if (pos_ + static_cast<std::size_t>(n) > src_.size()) throw syntax_error{at(pos_), "truncated \\x, \\u or \\U escape"};
        std::string h = src_.substr(pos_, static_cast<std::size_t>(n));
        for (char d : h)
          if (!std::isxdigit(static_cast<unsigned char>(d))) throw syntax_error{at(pos_), "bad hexadecimal escape"};
        pos_ += static_cast<std::size_t>(n);
        unicode::append_utf8(out, static_cast<char32_t>(std::strtoul(h.c_str(), nullptr, 16)));
      };
      switch (e) {
        case 'n': out += '\n'; break;
        case 't': out += '\t'; break;
        case 'r': out += '\r'; break;
        case '\\': out += '\\'; break;
        case '\'': out += '\''; break;
        case '"': out += '"'; break;
        case 'a': out += '\a'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'v': out += '\v'; break;
        case '\n': break;  // a backslash-newline continues the line
        case 'x': hex(2); break;
        case 'u': hex(4); break;
        case 'U': hex(8); break;
        default: out += '\\'; out += e;
      }
    }
    token t{token::kind::string, "", value::string(out), at(start)};
    tokens_.push_back(std::move(t));
  }

  std::string src_;
  environment_options options_;
  std::size_t pos_ = 0;
  bool line_starting_ = true;
  std::vector<token> tokens_;
};

using kind = expression::kind;

class parser {
 public:
  explicit parser(std::vector<token> tokens) : t_(std::move(tokens)) {}

  node_list parse_template() {
    auto [body, end] = parse_body({});
    return body;
  }

 private:
  const token& cur() const { return t_[i_]; }
  const token& peek(std::size_t n = 1) const { return t_[std::min(i_ + n, t_.size() - 1)]; }
  bool is_op(std::string_view op) const { return cur().type == token::kind::op && cur().text == op; }
  bool is_name(std::string_view n) const { return cur().type == token::kind::name && cur().text == n; }
  bool skip_op(std::string_view op) {
    if (!is_op(op)) return false;
    ++i_;
    return true;
  }
  bool skip_name(std::string_view n) {
    if (!is_name(n)) return false;
    ++i_;
    return true;
  }
  std::string describe(const token& t) const {
    switch (t.type) {
      case token::kind::eof: return "end of template";
      case token::kind::variable_end: return "'}}'";
      case token::kind::block_end: return "'%}'";
      case token::kind::text: return "template text";
      case token::kind::string: return "a string";
      default: return "'" + t.text + "'";
    }
  }
  [[noreturn]] void fail(const std::string& what) const { throw syntax_error{cur().at, what}; }
  void expect_op(std::string_view op) {
    if (!skip_op(op)) fail(fmt::format("expected '{}', got {}", op, describe(cur())));
  }
  void expect(token::kind k, const char* what) {
    if (cur().type != k) fail(fmt::format("expected {}, got {}", what, describe(cur())));
    ++i_;
  }
  std::string expect_name() {
    if (cur().type != token::kind::name) fail("expected a name, got " + describe(cur()));
    return t_[i_++].text;
  }

  static std::shared_ptr<expression> make(kind k, position at) {
    auto e = std::make_shared<expression>();
    e->type = k;
    e->at = at;
    return e;
  }

  // Statements up to a {% KEYWORD %} in `ends` (left after the keyword) or the end.
  std::pair<node_list, std::string> parse_body(const std::set<std::string>& ends) {
    node_list out;
    for (;;) {
      const token& t = cur();
      if (t.type == token::kind::eof) {
        if (!ends.empty()) fail(fmt::format("missing {{% {} %}}", *ends.rbegin()));
        return {std::move(out), ""};
      }
      if (t.type == token::kind::text) {
        auto n = std::make_shared<template_node>();
        n->type = template_node::kind::text;
        n->at = t.at;
        n->text = t.text;
        out.push_back(n);
        ++i_;
      } else if (t.type == token::kind::variable_begin) {
        ++i_;
        auto n = std::make_shared<template_node>();
        n->type = template_node::kind::output;
        n->at = t.at;
        n->expr = parse_tuple(true);
        expect(token::kind::variable_end, "'}}'");
        out.push_back(n);
      } else if (t.type == token::kind::block_begin) {
        ++i_;
        const token& keyword = cur();
        if (keyword.type != token::kind::name) fail("expected a statement name, got " + describe(keyword));
        if (ends.count(keyword.text)) {
          ++i_;
          return {std::move(out), keyword.text};
        }
        out.push_back(parse_statement());
      } else {
        fail("unexpected " + describe(t));
      }
    }
  }

  std::shared_ptr<template_node> parse_statement() {
    const token& keyword = t_[i_++];
    auto n = std::make_shared<template_node>();
    n->at = keyword.at;
    const std::string& k = keyword.text;
    if (k == "if") {
      n->type = template_node::kind::if_;
      auto cond = parse_tuple(false);
      for (;;) {
        expect(token::kind::block_end, "'%}'");
        auto [body, end] = parse_body({"elif", "else", "endif"});
        n->branches.emplace_back(cond, std::move(body));
        if (end == "elif") {
          cond = parse_tuple(false);
          continue;
        }
        if (end == "else") {
          expect(token::kind::block_end, "'%}'");
          n->otherwise = parse_body({"endif"}).first;
        }
        break;
      }
    } else if (k == "for") {
      n->type = template_node::kind::for_;
      n->targets = parse_targets();
      if (!skip_name("in")) fail("expected 'in' in a for statement, got " + describe(cur()));
      n->expr = parse_tuple(false);
      if (skip_name("if")) n->filter = parse_tuple(true);
      if (is_name("recursive")) fail("recursive for loops are not supported");
      expect(token::kind::block_end, "'%}'");
      auto [body, end] = parse_body({"else", "endfor"});
      n->body = std::move(body);
      if (end == "else") {
        expect(token::kind::block_end, "'%}'");
        n->otherwise = parse_body({"endfor"}).first;
      }
    } else if (k == "set") {
      n->type = template_node::kind::set;
      if (cur().type == token::kind::name && peek().type == token::kind::op && peek().text == ".") {
        n->targets.push_back(expect_name());
        ++i_;
        n->attribute = expect_name();
      } else {
        n->targets = parse_targets();
      }
      if (skip_op("=")) {
        n->expr = parse_tuple(true);
      } else {
        // {% set x %}...{% endset %}: the body's text
        if (n->targets.size() != 1 || !n->attribute.empty()) fail("a block set assigns one name");
        expect(token::kind::block_end, "'%}'");
        n->body = parse_body({"endset"}).first;
      }
    } else if (k == "break" || k == "continue") {
      n->type = k == "break" ? template_node::kind::break_ : template_node::kind::continue_;
    } else if (k == "generation") {
      n->type = template_node::kind::body;  // transformers' assistant-mask marker: renders its body
      expect(token::kind::block_end, "'%}'");
      n->body = parse_body({"endgeneration"}).first;
    } else {
      i_--;
      fail(fmt::format("unsupported statement '{}'", k));
    }
    expect(token::kind::block_end, "'%}'");
    return n;
  }

  std::vector<std::string> parse_targets() {
    std::vector<std::string> names;
    bool paren = skip_op("(");
    do {
      names.push_back(expect_name());
    } while (skip_op(","));
    if (paren) expect_op(")");
    return names;
  }

  // An expression, or a tuple of them (a, b), which is a list here.
  expression_ptr parse_tuple(bool with_conditional) {
    position at = cur().at;
    auto first = with_conditional ? parse_expression() : parse_or();
    if (!is_op(",")) return first;
    auto tuple = make(kind::list, at);
    tuple->operands.push_back(first);
    while (skip_op(",")) {
      if (cur().type == token::kind::variable_end || cur().type == token::kind::block_end || is_op(")")) break;
      tuple->operands.push_back(with_conditional ? parse_expression() : parse_or());
    }
    return tuple;
  }

  expression_ptr parse_expression() {
    auto e = parse_or();
    while (is_name("if")) {
      auto c = make(kind::conditional, cur().at);
      ++i_;
      c->operands.push_back(parse_or());
      c->operands.push_back(e);
      c->operands.push_back(skip_name("else") ? parse_expression() : nullptr);
      e = c;
    }
    return e;
  }

  expression_ptr binary(const std::string& op, expression_ptr l, expression_ptr r, position at) {
    auto b = make(kind::binary, at);
    b->text = op;
    b->operands = {std::move(l), std::move(r)};
    return b;
  }

  expression_ptr parse_or() {
    auto e = parse_and();
    while (is_name("or")) {
      auto at = cur().at;
      ++i_;
      e = binary("or", e, parse_and(), at);
    }
    return e;
  }
  expression_ptr parse_and() {
    auto e = parse_not();
    while (is_name("and")) {
      auto at = cur().at;
      ++i_;
      e = binary("and", e, parse_not(), at);
    }
    return e;
  }
  expression_ptr parse_not() {
    if (is_name("not")) {
      auto n = make(kind::unary, cur().at);
      ++i_;
      n->text = "not";
      n->operands.push_back(parse_not());
      return n;
    }
    return parse_compare();
  }
  expression_ptr parse_compare() {
    auto e = parse_math1();
    expression_ptr chain;
    for (;;) {
      auto at = cur().at;
      std::string op;
      if (cur().type == token::kind::op &&
          (cur().text == "==" || cur().text == "!=" || cur().text == "<" || cur().text == ">" || cur().text == "<=" ||
           cur().text == ">=")) {
        op = cur().text;
        ++i_;
      } else if (is_name("in")) {
        op = "in";
        ++i_;
      } else if (is_name("not") && peek().type == token::kind::name && peek().text == "in") {
        op = "notin";
        i_ += 2;
      } else {
        break;
      }
      auto right = parse_math1();
      auto pair = binary(op, e, right, at);
      chain = chain ? binary("and", chain, pair, at) : pair;  // a < b < c is a < b and b < c
      e = right;
    }
    return chain ? chain : e;
  }
  expression_ptr parse_math1() {
    auto e = parse_concat();
    while (is_op("+") || is_op("-")) {
      auto at = cur().at;
      std::string op = t_[i_++].text;
      e = binary(op, e, parse_concat(), at);
    }
    return e;
  }
  expression_ptr parse_concat() {
    auto e = parse_math2();
    while (is_op("~")) {
      auto at = cur().at;
      ++i_;
      e = binary("~", e, parse_math2(), at);
    }
    return e;
  }
  expression_ptr parse_math2() {
    auto e = parse_pow();
    while (is_op("*") || is_op("/") || is_op("//") || is_op("%")) {
      auto at = cur().at;
      std::string op = t_[i_++].text;
      e = binary(op, e, parse_pow(), at);
    }
    return e;
  }
  expression_ptr parse_pow() {
    auto e = parse_unary(true);
    while (is_op("**")) {
      auto at = cur().at;
      ++i_;
      e = binary("**", e, parse_unary(true), at);
    }
    return e;
  }
  expression_ptr parse_unary(bool with_filter) {
    expression_ptr e;
    if (is_op("-") || is_op("+")) {
      auto u = make(kind::unary, cur().at);
      u->text = t_[i_++].text;
      u->operands.push_back(parse_unary(false));
      e = u;
    } else {
      e = parse_primary();
    }
    e = parse_postfix(e);
    if (with_filter) e = parse_filter_expr(e);
    return e;
  }

  expression_ptr parse_primary() {
    const token& t = cur();
    auto e = make(kind::literal, t.at);
    if (t.type == token::kind::name) {
      ++i_;
      if (t.text == "true" || t.text == "True") e->constant = value::boolean(true);
      else if (t.text == "false" || t.text == "False") e->constant = value::boolean(false);
      else if (t.text == "none" || t.text == "None") e->constant = value::none();
      else {
        e->type = kind::name;
        e->text = t.text;
      }
      return e;
    }
    if (t.type == token::kind::string) {
      std::string s;
      while (cur().type == token::kind::string) s += t_[i_++].constant.as_string();  // 'a' 'b' is 'ab'
      e->constant = value::string(std::move(s));
      return e;
    }
    if (t.type == token::kind::integer || t.type == token::kind::number) {
      ++i_;
      e->constant = t.constant;
      return e;
    }
    if (skip_op("(")) {
      if (skip_op(")")) {
        e->type = kind::list;
        return e;
      }
      auto inner = parse_tuple(true);
      expect_op(")");
      return inner;
    }
    if (skip_op("[")) {
      e->type = kind::list;
      while (!is_op("]")) {
        e->operands.push_back(parse_expression());
        if (!skip_op(",")) break;
      }
      expect_op("]");
      return e;
    }
    if (skip_op("{")) {
      e->type = kind::dict;
      while (!is_op("}")) {
        auto key = parse_expression();
        if (key->type != kind::literal || !key->constant.is_string()) fail("dict keys must be string literals here");
        e->keywords.push_back(key->constant.as_string());
        expect_op(":");
        e->operands.push_back(parse_expression());
        if (!skip_op(",")) break;
      }
      expect_op("}");
      return e;
    }
    fail("unexpected " + describe(t));
  }

  expression_ptr parse_postfix(expression_ptr e) {
    for (;;) {
      if (is_op(".")) {
        auto at = cur().at;
        ++i_;
        if (cur().type == token::kind::integer) {
          auto item = make(kind::item, at);
          auto index = make(kind::literal, at);
          index->constant = t_[i_++].constant;
          item->operands = {e, index};
          e = item;
        } else {
          auto a = make(kind::attribute, at);
          a->text = expect_name();
          a->operands.push_back(e);
          e = a;
        }
      } else if (is_op("[")) {
        e = parse_subscript(e);
      } else if (is_op("(")) {
        e = parse_call(e, kind::call, "");
      } else {
        return e;
      }
    }
  }

  expression_ptr parse_subscript(expression_ptr e) {
    auto at = cur().at;
    expect_op("[");
    expression_ptr parts[3];
    bool slice = false;
    for (int part = 0; part < 3; ++part) {
      if (!is_op(":") && !is_op("]")) parts[part] = parse_expression();
      if (part < 2 && skip_op(":")) {
        slice = true;
        continue;
      }
      break;
    }
    expect_op("]");
    auto s = make(slice ? kind::slice : kind::item, at);
    if (!slice && !parts[0]) fail("empty subscript");
    s->operands = {e, parts[0]};
    if (slice) s->operands.insert(s->operands.end(), {parts[1], parts[2]});
    return s;
  }

  // `e(args)`, or for a filter/test the arguments in parentheses after its name.
  expression_ptr parse_call(expression_ptr e, kind k, const std::string& name) {
    auto c = make(k, k == kind::call ? e->at : name_at_);
    c->text = name;
    c->operands.push_back(e);
    std::vector<expression_ptr> keyword_values;
    if (skip_op("(")) {
      while (!is_op(")")) {
        if (cur().type == token::kind::name && peek().type == token::kind::op && peek().text == "=") {
          c->keywords.push_back(t_[i_].text);
          i_ += 2;
          keyword_values.push_back(parse_expression());
        } else {
          if (!keyword_values.empty()) fail("a positional argument follows a keyword argument");
          c->operands.push_back(parse_expression());
        }
        if (!skip_op(",")) break;
      }
      expect_op(")");
    }
    c->operands.insert(c->operands.end(), keyword_values.begin(), keyword_values.end());
    return c;
  }

  expression_ptr parse_filter_expr(expression_ptr e) {
    for (;;) {
      if (skip_op("|")) {
        name_at_ = cur().at;
        std::string name = expect_name();
        while (is_op(".")) {
          ++i_;
          name += "." + expect_name();
        }
        e = parse_call(e, kind::filter, name);
      } else if (is_name("is")) {
        ++i_;
        bool negated = skip_name("not");
        name_at_ = cur().at;
        std::string name = expect_name();
        std::shared_ptr<expression> t;
        if (is_op("(")) {
          t = std::const_pointer_cast<expression>(parse_call(e, kind::test, name));
        } else {
          t = make(kind::test, name_at_);
          t->text = name;
          t->operands.push_back(e);
          const token& c = cur();
          bool argument = (c.type == token::kind::name || c.type == token::kind::string ||
                           c.type == token::kind::integer || c.type == token::kind::number || is_op("[") ||
                           is_op("{")) &&
                          !is_name("else") && !is_name("or") && !is_name("and");
          if (argument) {
            if (is_name("is")) fail("tests cannot be chained with is");
            t->operands.push_back(parse_postfix(parse_primary()));
          }
        }
        t->negated = negated;
        e = t;
      } else if (is_op("(")) {
        e = parse_call(e, kind::call, "");
      } else {
        return e;
      }
    }
  }

  std::vector<token> t_;
  std::size_t i_ = 0;
  position name_at_;  // of the filter or test name being parsed
};

}  // namespace

result<parsed_template> parsed_template::parse(std::string_view source, const std::string& name,
                                               const environment_options& options) {
  std::string text;
  text.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      text += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    } else {
      text += source[i];
    }
  }
  if (!text.empty() && text.back() == '\n') text.pop_back();  // jinja2's keep_trailing_newline=False
  try {
    lexer lex(text, options);
    auto tokens = lex.run();
    parser p(std::move(tokens));
    auto root = std::make_shared<template_node>();
    root->type = template_node::kind::body;
    root->body = p.parse_template();
    parsed_template t;
    t.root_ = std::move(root);
    t.name_ = name;
    return t;
  } catch (const syntax_error& e) {
    return make_error(errc::invalid_argument, fmt::format("{}:{}:{}: {}", name, e.at.line, e.at.column, e.message));
  }
}

}  // namespace crucible::policy::jinja
