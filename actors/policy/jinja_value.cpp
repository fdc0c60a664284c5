#include "actors/policy/jinja_value.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "runtime/base/result.hpp"

namespace crucible::policy::jinja {

const value* value_dict::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

void value_dict::set(const std::string& key, value v) {
  for (auto& [k, old] : entries) {
    if (k == key) {
      old = std::move(v);
      return;
    }
  }
  entries.emplace_back(key, std::move(v));
}

value value::undefined(std::string hint) {
  value v;
  v.s_ = std::move(hint);
  return v;
}
value value::none() { return of(kind::none); }
value value::boolean(bool b) {
  value v = of(kind::boolean);
  v.b_ = b;
  return v;
}
value value::integer(std::int64_t i) {
  value v = of(kind::integer);
  v.i_ = i;
  return v;
}
value value::number(double d) {
  value v = of(kind::number);
  v.d_ = d;
  return v;
}
value value::string(std::string s) {
  value v = of(kind::string);
  v.s_ = std::move(s);
  return v;
}
value value::list(value_list items) {
  value v = of(kind::list);
  v.list_ = std::make_shared<const value_list>(std::move(items));
  return v;
}
value value::dict(value_dict d) {
  value v = of(kind::dict);
  v.dict_ = std::make_shared<value_dict>(std::move(d));
  return v;
}
value value::make_namespace(value_dict d) {
  value v = dict(std::move(d));
  v.kind_ = kind::ns;
  return v;
}
value value::function(native_function f) {
  value v = of(kind::function);
  v.f_ = std::make_shared<const native_function>(std::move(f));
  return v;
}

double value::as_double() const {
  if (kind_ == kind::number) return d_;
  return static_cast<double>(as_int());
}

const value_list& value::as_list() const {
  CRUCIBLE_CHECK(kind_ == kind::list, "as_list of a value that is not a list");
  return *list_;
}

const value_dict& value::as_dict() const {
  CRUCIBLE_CHECK(kind_ == kind::dict || kind_ == kind::ns, "as_dict of a value that is not a mapping");
  return *dict_;
}

value_dict& value::mutable_namespace() const {
  CRUCIBLE_CHECK(kind_ == kind::ns, "mutable_namespace of a value that is not a namespace");
  return *dict_;
}

bool value::truthy() const {
  switch (kind_) {
    case kind::undefined:
    case kind::none: return false;
    case kind::boolean: return b_;
    case kind::integer: return i_ != 0;
    case kind::number: return d_ != 0;
    case kind::string: return !s_.empty();
    case kind::list: return !list_->empty();
    case kind::dict:
    case kind::ns: return !dict_->entries.empty();
    case kind::function: return true;
  }
  return false;
}

std::string_view value::type_name() const {
  switch (kind_) {
    case kind::undefined: return "Undefined";
    case kind::none: return "NoneType";
    case kind::boolean: return "bool";
    case kind::integer: return "int";
    case kind::number: return "float";
    case kind::string: return "str";
    case kind::list: return "list";
    case kind::dict: return "dict";
    case kind::ns: return "Namespace";
    case kind::function: return "function";
  }
  return "?";
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
  CRUCIBLE_CHECK(ec == std::errc(), "to_chars of a double fits 64 bytes");
  std::string sci(buf, end);  // [-]D[.DDD]e[+-]XX
  bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  auto e = sci.find('e');
  int exponent = std::atoi(sci.c_str() + e + 1);
  std::string digits;
  for (std::size_t i = 0; i < e; ++i)
    if (sci[i] != '.') digits += sci[i];
  std::string out;
  if (exponent >= -4 && exponent < 16) {  // Python's repr: fixed notation in this range
    auto point = static_cast<std::size_t>(exponent + 1);
    if (exponent < 0) out = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    else if (point >= digits.size()) out = digits + std::string(point - digits.size(), '0') + ".0";
    else out = digits.substr(0, point) + "." + digits.substr(point);
  }
  if (out.empty()) {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp_text[16];
    std::snprintf(exp_text, sizeof exp_text, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    out += exp_text;
  }
  return negative ? "-" + out : out;
}

namespace {

std::string string_repr(const std::string& s) {
  char quote = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  std::string out(1, quote);
  for (unsigned char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == static_cast<unsigned char>(quote)) out += std::string("\\") + quote;
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + quote;
}

void json_string(const std::string& s, std::string& out) {
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
}

bool json_into(const value& v, std::optional<int> indent, bool sort_keys, int depth, std::string& out) {
  auto newline = [&](int level) {
    if (!indent) return;
    out += '\n';
    out.append(static_cast<std::size_t>(*indent * level), ' ');
  };
  const char* item_separator = indent ? "," : ", ";
  switch (v.type()) {
    case value::kind::none: out += "null"; return true;
    case value::kind::boolean: out += v.as_bool() ? "true" : "false"; return true;
    case value::kind::integer: out += std::to_string(v.as_int()); return true;
    case value::kind::number: {
      double d = v.as_double();
      if (std::isnan(d)) out += "NaN";
      else if (std::isinf(d)) out += d > 0 ? "Infinity" : "-Infinity";
      else out += float_repr(d);
      return true;
    }
    case value::kind::string: json_string(v.as_string(), out); return true;
    case value::kind::list: {
      const auto& items = v.as_list();
      if (items.empty()) {
        out += "[]";
        return true;
      }
      out += '[';
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out += item_separator;
        newline(depth + 1);
        if (!json_into(items[i], indent, sort_keys, depth + 1, out)) return false;
      }
      newline(depth);
      out += ']';
      return true;
    }
    case value::kind::dict: {
      auto entries = v.as_dict().entries;
      if (entries.empty()) {
        out += "{}";
        return true;
      }
      if (sort_keys)
        std::stable_sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      out += '{';
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i) out += item_separator;
        newline(depth + 1);
        json_string(entries[i].first, out);
        out += ": ";
        if (!json_into(entries[i].second, indent, sort_keys, depth + 1, out)) return false;
      }
      newline(depth);
      out += '}';
      return true;
    }
    default: return false;
  }
}

}  // namespace

std::optional<std::string> to_json(const value& v, std::optional<int> indent, bool sort_keys) {
  std::string out;
  if (!json_into(v, indent, sort_keys, 0, out)) return std::nullopt;
  return out;
}

std::string value::str() const {
  switch (kind_) {
    case kind::undefined: return "";
    case kind::string: return s_;
    default: return repr();
  }
}

std::string value::repr() const {
  switch (kind_) {
    case kind::undefined: return "";
    case kind::none: return "None";
    case kind::boolean: return b_ ? "True" : "False";
    case kind::integer: return std::to_string(i_);
    case kind::number: return float_repr(d_);
    case kind::string: return string_repr(s_);
    case kind::list: {
      std::string out = "[";
      for (std::size_t i = 0; i < list_->size(); ++i) out += (i ? ", " : "") + (*list_)[i].repr();
      return out + "]";
    }
    case kind::dict: {
      std::string out = "{";
      for (std::size_t i = 0; i < dict_->entries.size(); ++i)
        out += (i ? ", " : "") + string_repr(dict_->entries[i].first) + ": " + dict_->entries[i].second.repr();
      return out + "}";
    }
    case kind::ns: return "<Namespace>";
    case kind::function: return "<function>";
  }
  return "";
}

bool equal(const value& a, const value& b) {
  using k = value::kind;
  if (a.is_numeric() && b.is_numeric()) {
    if (a.type() == k::number || b.type() == k::number) return a.as_double() == b.as_double();
    return a.as_int() == b.as_int();
  }
  if (a.type() != b.type()) return false;
  switch (a.type()) {
    case k::undefined:
    case k::none: return true;
    case k::string: return a.as_string() == b.as_string();
    case k::list: {
      const auto &x = a.as_list(), &y = b.as_list();
      if (x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!equal(x[i], y[i])) return false;
      return true;
    }
    case k::dict: {
      const auto &x = a.as_dict().entries, &y = b.as_dict().entries;
      if (x.size() != y.size()) return false;
      for (const auto& [key, v] : x) {
        const value* other = b.as_dict().find(key);
        if (!other || !equal(v, *other)) return false;
      }
      return true;
    }
    case k::ns: return &a.as_dict() == &b.as_dict();  // identity, as Python objects
    default: return false;
  }
}

std::optional<bool> less(const value& a, const value& b) {
  if (a.is_numeric() && b.is_numeric()) {
    if (a.type() == value::kind::number || b.type() == value::kind::number) return a.as_double() < b.as_double();
    return a.as_int() < b.as_int();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 order is code-point order
  if (a.type() == value::kind::list && b.type() == value::kind::list) {
    const auto &x = a.as_list(), &y = b.as_list();
    for (std::size_t i = 0; i < std::min(x.size(), y.size()); ++i) {
      if (equal(x[i], y[i])) continue;
      return less(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  return std::nullopt;
}

}  // namespace crucible::policy::jinja
