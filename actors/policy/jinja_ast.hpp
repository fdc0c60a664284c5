// The parsed form of a Jinja template (jinja_template.hpp): what
// jinja_parse.cpp builds and jinja_render.cpp walks. Internal to the
// interpreter.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "actors/policy/jinja_template.hpp"
#include "actors/policy/jinja_value.hpp"

namespace crucible::policy::jinja {

struct position {
  int line = 1, column = 1;
};

struct expression;
using expression_ptr = std::shared_ptr<const expression>;

struct expression {
  enum class kind {
    literal,      // constant
    name,         // text
    attribute,    // operands[0].text
    item,         // operands[0][operands[1]]
    slice,        // operands[0][a:b:c]; operands[1..3] may be null
    call,         // operands[0](operands[1..], keywords)
    filter,       // operands[0] | text(operands[1..], keywords)
    test,         // operands[0] is [not] text(operands[1..])
    unary,        // text in "-", "+", "not"
    binary,       // text in + - * / // % ** ~ == != < > <= >= in notin and or
    conditional,  // operands[1] if operands[0] else operands[2] (may be null)
    list,         // [operands...] (also tuples)
    dict,         // {keys[i]: operands[i]}
  };
  kind type = kind::literal;
  position at;
  value constant;
  std::string text;
  bool negated = false;                         // `is not`
  std::vector<expression_ptr> operands;
  std::vector<std::string> keywords;            // call/filter: names of the last keywords.size() operands; dict: keys
};

struct template_node;
using node_list = std::vector<std::shared_ptr<const template_node>>;

struct template_node {
  enum class kind { text, output, if_, for_, set, break_, continue_, body };
  kind type = kind::text;
  position at;
  std::string text;                              // text
  expression_ptr expr;                           // output, set value, for iterable
  std::vector<std::pair<expression_ptr, node_list>> branches;  // if/elif: condition and body
  node_list body, otherwise;                     // for body / else; if else; body
  std::vector<std::string> targets;              // for / set names
  std::string attribute;                         // set ns.attribute
  expression_ptr filter;                         // for ... if filter
};

// Builtins (jinja_builtins.cpp). Each throws jinja::raised for what Python
// would raise; the renderer adds the position.

// obj.name: a str or dict method bound to obj, else a dict's item; Undefined
// when absent. Raises for an attribute of Undefined.
value get_attribute(const value& obj, const std::string& name);
// obj[key]: an item (negative list indexes count from the end), else an
// attribute; Undefined when absent.
value get_item(const value& obj, const value& key);
// obj[start:stop:step] of a list or str.
value get_slice(const value& obj, const value& start, const value& stop, const value& step);
value apply_filter(const std::string& name, const value& subject, const value_list& args, const keyword_args& kwargs);
bool apply_test(const std::string& name, const value& subject, const value_list& args);
// The items a for loop visits: a list's items, a dict's keys, a str's
// characters, nothing for Undefined.
value_list iterate(const value& v);
// range, namespace and dict, or Undefined.
value builtin_global(const std::string& name);
// A str as its characters (UTF-8 code points).
std::vector<std::string> characters(const std::string& s);

}  // namespace crucible::policy::jinja
