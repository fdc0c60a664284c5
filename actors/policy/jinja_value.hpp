// The values a Jinja template computes with, as Python holds them when
// transformers renders a chat template: None, bools, ints, floats, strings,
// lists, dicts (in insertion order), namespace() objects and callables, plus
// Jinja's Undefined. Printing, truth, equality and json.dumps follow Python,
// so that the C++ renderer and jinja2 produce the same text. Used only by the
// Jinja interpreter (jinja_template.hpp) and the chat-template layer.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace crucible::policy::jinja {

class value;
using value_list = std::vector<value>;
using keyword_args = std::vector<std::pair<std::string, value>>;

// An ordered string-keyed map, as a Python dict built from JSON.
struct value_dict {
  std::vector<std::pair<std::string, value>> entries;
  const value* find(std::string_view key) const;
  void set(const std::string& key, value v);
};

// A global such as raise_exception() or a bound method such as str.strip.
// Failures are thrown as jinja::failure (jinja_template.hpp) by the callee.
using native_function = std::function<value(const value_list& args, const keyword_args& kwargs)>;

class value {
 public:
  enum class kind { undefined, none, boolean, integer, number, string, list, dict, ns, function };

  value() = default;  // Undefined
  static value undefined(std::string hint);  // Undefined that says, in errors, what it stands for
  static value none();
  static value boolean(bool b);
  static value integer(std::int64_t i);
  static value number(double d);
  static value string(std::string s);
  static value list(value_list items);
  static value dict(value_dict d);
  static value make_namespace(value_dict d);  // namespace(): a dict whose attributes `set` may change
  static value function(native_function f);

  kind type() const { return kind_; }
  bool is_undefined() const { return kind_ == kind::undefined; }
  bool is_none() const { return kind_ == kind::none; }
  bool is_string() const { return kind_ == kind::string; }
  bool is_numeric() const { return kind_ == kind::integer || kind_ == kind::number || kind_ == kind::boolean; }
  bool is_mapping() const { return kind_ == kind::dict || kind_ == kind::ns; }

  bool as_bool() const { return b_; }
  std::int64_t as_int() const { return kind_ == kind::boolean ? (b_ ? 1 : 0) : i_; }
  double as_double() const;
  const std::string& as_string() const { return s_; }  // a string's text, or an Undefined's hint
  const value_list& as_list() const;
  const value_dict& as_dict() const;
  value_dict& mutable_namespace() const;  // only for kind::ns
  const native_function& as_function() const { return *f_; }

  bool truthy() const;                // Python bool()
  std::string str() const;            // Python str(), Undefined as ""
  std::string repr() const;           // Python repr()
  std::string_view type_name() const;  // Python's name of the type, for errors

 private:
  static value of(kind k) {
    value v;
    v.kind_ = k;
    return v;
  }

  kind kind_ = kind::undefined;
  bool b_ = false;
  std::int64_t i_ = 0;
  double d_ = 0;
  std::string s_;
  std::shared_ptr<const value_list> list_;
  std::shared_ptr<value_dict> dict_;
  std::shared_ptr<const native_function> f_;
};

// Python ==: 1 == 1.0 == True, lists and dicts element-wise, Undefined only
// equal to Undefined.
bool equal(const value& a, const value& b);
// Python <, for numbers, strings and lists; nullopt when Python would raise.
std::optional<bool> less(const value& a, const value& b);

// Python's repr() of a float (shortest round trip: 0.5, 1e+16, 2.0).
std::string float_repr(double d);

// json.dumps(v, ensure_ascii=False, indent=indent, sort_keys=sort_keys), as
// transformers' tojson filter calls it. nullopt for a value JSON cannot hold
// (Undefined, a namespace, a callable).
std::optional<std::string> to_json(const value& v, std::optional<int> indent = std::nullopt, bool sort_keys = false);

}  // namespace crucible::policy::jinja
