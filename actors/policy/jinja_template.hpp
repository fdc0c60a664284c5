// A small Jinja interpreter: the part of Jinja2 that Hugging Face chat
// templates use, rendered exactly as transformers renders them
// (ImmutableSandboxedEnvironment with trim_blocks and lstrip_blocks).
//
// Statements: {% if/elif/else %}, {% for a[, b] in x [if cond] %} with
// {% else %}, loop.index/index0/first/last/length/revindex/previtem/nextitem,
// {% break %} / {% continue %}, {% set x = ... %} and {% set ns.x = ... %}
// (scoped as Jinja: a set inside a for loop does not outlive its iteration),
// {% generation %} (transformers' marker, rendered through), comments and the
// whitespace controls {%- -%} {{- -}} {%+ +%}. Expressions: literals, lists,
// dicts, attribute and item access, slices, calls with keyword arguments,
// filters, tests (is / is not), not/and/or, comparisons and `in`, + - * / // %
// ~, `a if c else b`. The filters, tests, methods and globals are listed in
// jinja_builtins.cpp. Macros, blocks, includes and {% raw %} are refused at
// parse time.
//
// Why not a library: Debian 12 packages no C++ Jinja engine (apt-cache search
// inja / jinja: only Python, Rust and R ones).
//
// Any thread; a parsed template is immutable and cheap to copy.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "actors/policy/jinja_value.hpp"
#include "runtime/base/result.hpp"

namespace crucible::policy::jinja {

// Thrown by a native function (a filter, a method, raise_exception) to fail
// the render; the interpreter adds the template's name, line and column and
// returns it as an error value. Never leaves this module.
struct raised {
  std::string message;
};

struct template_node;  // jinja_ast.hpp

struct environment_options {
  bool trim_blocks = true;    // drop the newline after a block tag; transformers sets it
  bool lstrip_blocks = true;  // drop the indentation before a block tag; transformers sets it
};

class parsed_template {
 public:
  // invalid_argument "NAME:LINE:COL: what" for a syntax error or an
  // unsupported statement.
  static result<parsed_template> parse(std::string_view source, const std::string& name,
                                       const environment_options& options = {});

  // Renders with `variables` as globals (beside range, namespace and dict).
  // invalid_argument "NAME:LINE:COL: what" for what Python would raise:
  // raise_exception(), an undefined value used in arithmetic or as an
  // object, a type error, an unknown filter.
  result<std::string> render(const value_dict& variables) const;

  const std::string& name() const { return name_; }

 private:
  std::shared_ptr<const template_node> root_;
  std::string name_;
};

}  // namespace crucible::policy::jinja
