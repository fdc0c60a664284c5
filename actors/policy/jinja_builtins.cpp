// Jinja's filters, tests and globals, and the str and dict methods that
// chat templates call, with the behaviour of jinja2 3.1 and Python 3 (in
// ImmutableSandboxedEnvironment, which allows no method that changes a list
// or dict). Filters: trim, tojson (transformers' json.dumps version), length,
// count, upper, lower, capitalize, title, items, join, first, last, default
// (d), string, int, float, list, abs, replace, safe, select, reject,
// selectattr, rejectattr, map. Tests: defined, undefined, none, boolean,
// true, false, integer, float, number, string, mapping, iterable, sequence,
// callable, equalto (eq, ==, sameas), ne (!=), lt (<), le (<=), gt (>),
// ge (>=), in, odd, even, divisibleby, lower, upper. Methods: str.strip,
// lstrip, rstrip, startswith, endswith, split, upper, lower, title,
// capitalize, replace, find; dict.items, keys, values, get.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "actors/policy/jinja_ast.hpp"

namespace crucible::policy::jinja {

namespace {

[[noreturn]] void raise(std::string message) { throw raised{std::move(message)}; }

bool py_space(char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f'); }

std::string strip(const std::string& s, const value& chars, bool left, bool right) {
  auto drop = [&](char c) { return chars.is_string() ? chars.as_string().find(c) != std::string::npos : py_space(c); };
  std::size_t b = 0, e = s.size();
  if (left)
    while (b < e && drop(s[b])) ++b;
  if (right)
    while (e > b && drop(s[e - 1])) --e;
  return s.substr(b, e - b);
}

std::string map_ascii(std::string s, int (*f)(int)) {
  for (auto& c : s) c = static_cast<char>(f(static_cast<unsigned char>(c)));
  return s;
}

std::string capitalize(const std::string& s) {
  std::string out = map_ascii(s, [](int c) { return std::tolower(c); });
  if (!out.empty()) out[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(out[0])));
  return out;
}

std::string title(const std::string& s) {
  std::string out = s;
  bool start = true;
  for (auto& c : out) {
    unsigned char u = static_cast<unsigned char>(c);
    c = static_cast<char>(start ? std::toupper(u) : std::tolower(u));
    start = !std::isalnum(u);
  }
  return out;
}

std::string replace(const std::string& s, const std::string& from, const std::string& to, std::int64_t count) {
  if (from.empty()) return s;
  std::string out;
  std::size_t pos = 0;
  for (std::int64_t n = 0; count < 0 || n < count; ++n) {
    std::size_t hit = s.find(from, pos);
    if (hit == std::string::npos) break;
    out += s.substr(pos, hit - pos) + to;
    pos = hit + from.size();
  }
  return out + s.substr(pos);
}

value arg(const value_list& args, const keyword_args& kwargs, std::size_t index, std::string_view name,
          const value& fallback) {
  for (const auto& [k, v] : kwargs)
    if (k == name) return v;
  return index < args.size() ? args[index] : fallback;
}

const value& need_string(const value& v, std::string_view what) {
  if (!v.is_string()) raise(fmt::format("{} needs a string, got '{}'", what, v.type_name()));
  return v;
}

bool starts_or_ends(const std::string& s, const value& affix, bool start) {
  auto one = [&](const std::string& a) {
    if (a.size() > s.size()) return false;
    return start ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0;
  };
  if (affix.type() == value::kind::list) {
    for (const auto& a : affix.as_list())
      if (one(need_string(a, "startswith/endswith").as_string())) return true;
    return false;
  }
  return one(need_string(affix, "startswith/endswith").as_string());
}

value split(const std::string& s, const value& sep, std::int64_t max) {
  value_list parts;
  if (sep.is_none() || sep.is_undefined()) {  // runs of whitespace, no empty parts
    std::size_t i = 0;
    while (i < s.size()) {
      while (i < s.size() && py_space(s[i])) ++i;
      if (i >= s.size()) break;
      if (max >= 0 && static_cast<std::int64_t>(parts.size()) == max) {
        parts.push_back(value::string(strip(s.substr(i), value(), false, true)));
        break;
      }
      std::size_t j = i;
      while (j < s.size() && !py_space(s[j])) ++j;
      parts.push_back(value::string(s.substr(i, j - i)));
      i = j;
    }
    return value::list(std::move(parts));
  }
  const std::string& d = need_string(sep, "split").as_string();
  if (d.empty()) raise("empty separator");
  std::size_t pos = 0;
  for (;;) {
    std::size_t hit = s.find(d, pos);
    if (hit == std::string::npos || (max >= 0 && static_cast<std::int64_t>(parts.size()) == max)) break;
    parts.push_back(value::string(s.substr(pos, hit - pos)));
    pos = hit + d.size();
  }
  parts.push_back(value::string(s.substr(pos)));
  return value::list(std::move(parts));
}

value string_method(const value& self, const std::string& name) {
  const std::string s = self.as_string();
  auto method = [](auto f) { return value::function(f); };
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    bool left = name != "rstrip", right = name != "lstrip";
    return method([s, left, right](const value_list& a, const keyword_args& k) {
      return value::string(strip(s, arg(a, k, 0, "chars", value::none()), left, right));
    });
  }
  if (name == "startswith" || name == "endswith") {
    bool start = name == "startswith";
    return method([s, start](const value_list& a, const keyword_args&) {
      if (a.empty()) raise("startswith/endswith takes one argument");
      return value::boolean(starts_or_ends(s, a[0], start));
    });
  }
  if (name == "split")
    return method([s](const value_list& a, const keyword_args& k) {
      value max = arg(a, k, 1, "maxsplit", value::integer(-1));
      return split(s, arg(a, k, 0, "sep", value::none()), max.as_int());
    });
  if (name == "upper") return method([s](const value_list&, const keyword_args&) { return value::string(map_ascii(s, [](int c) { return std::toupper(c); })); });
  if (name == "lower") return method([s](const value_list&, const keyword_args&) { return value::string(map_ascii(s, [](int c) { return std::tolower(c); })); });
  if (name == "title") return method([s](const value_list&, const keyword_args&) { return value::string(title(s)); });
  if (name == "capitalize") return method([s](const value_list&, const keyword_args&) { return value::string(capitalize(s)); });
  if (name == "replace")
    return method([s](const value_list& a, const keyword_args& k) {
      if (a.size() < 2) raise("replace takes two arguments");
      return value::string(replace(s, need_string(a[0], "replace").as_string(), need_string(a[1], "replace").as_string(),
                                   arg(a, k, 2, "count", value::integer(-1)).as_int()));
    });
  if (name == "find")
    return method([s](const value_list& a, const keyword_args&) {
      if (a.empty()) raise("find takes one argument");
      auto at = s.find(need_string(a[0], "find").as_string());
      return value::integer(at == std::string::npos ? -1 : static_cast<std::int64_t>(characters(s.substr(0, at)).size()));
    });
  return value::undefined(fmt::format("'str object' has no attribute '{}'", name));
}

value dict_method(const value& self, const std::string& name) {
  if (name == "items" || name == "keys" || name == "values") {
    return value::function([self, name](const value_list&, const keyword_args&) {
      value_list out;
      for (const auto& [k, v] : self.as_dict().entries) {
        if (name == "items") out.push_back(value::list({value::string(k), v}));
        else out.push_back(name == "keys" ? value::string(k) : v);
      }
      return value::list(std::move(out));
    });
  }
  if (name == "get") {
    return value::function([self](const value_list& a, const keyword_args& k) {
      if (a.empty()) raise("get takes a key");
      const value* v = a[0].is_string() ? self.as_dict().find(a[0].as_string()) : nullptr;
      return v ? *v : arg(a, k, 1, "default", value::none());
    });
  }
  return value();
}

std::int64_t length_of(const value& v) {
  switch (v.type()) {
    case value::kind::undefined: return 0;
    case value::kind::string: return static_cast<std::int64_t>(characters(v.as_string()).size());
    case value::kind::list: return static_cast<std::int64_t>(v.as_list().size());
    case value::kind::dict:
    case value::kind::ns: return static_cast<std::int64_t>(v.as_dict().entries.size());
    default: raise(fmt::format("object of type '{}' has no len()", v.type_name()));
  }
}

value select(const value& subject, const value_list& args, bool keep, bool by_attribute) {
  std::size_t first = by_attribute ? 1 : 0;
  if (by_attribute && args.empty()) raise("selectattr/rejectattr need an attribute");
  value_list out;
  for (const auto& item : iterate(subject)) {
    value probe = by_attribute ? get_attribute(item, need_string(args[0], "selectattr").as_string()) : item;
    bool pass = first < args.size()
                    ? apply_test(need_string(args[first], "select").as_string(), probe,
                                 value_list(args.begin() + static_cast<std::ptrdiff_t>(first) + 1, args.end()))
                    : probe.truthy();
    if (pass == keep) out.push_back(item);
  }
  return value::list(std::move(out));
}

}  // namespace

std::vector<std::string> characters(const std::string& s) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    std::size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

value_list iterate(const value& v) {
  switch (v.type()) {
    case value::kind::undefined: return {};
    case value::kind::list: return v.as_list();
    case value::kind::string: {
      value_list out;
      for (auto& c : characters(v.as_string())) out.push_back(value::string(std::move(c)));
      return out;
    }
    case value::kind::dict:
    case value::kind::ns: {
      value_list out;
      for (const auto& [k, x] : v.as_dict().entries) out.push_back(value::string(k));
      return out;
    }
    default: raise(fmt::format("'{}' object is not iterable", v.type_name()));
  }
}

value get_attribute(const value& obj, const std::string& name) {
  switch (obj.type()) {
    case value::kind::undefined: raise(fmt::format("{} (reading its attribute '{}')", obj.as_string().empty() ? "undefined value" : obj.as_string(), name));
    case value::kind::string: return string_method(obj, name);
    case value::kind::dict: {
      value method = dict_method(obj, name);
      if (!method.is_undefined()) return method;
      [[fallthrough]];
    }
    case value::kind::ns: {
      const value* v = obj.as_dict().find(name);
      return v ? *v : value::undefined(fmt::format("'dict object' has no attribute '{}'", name));
    }
    default: return value::undefined(fmt::format("'{}' object has no attribute '{}'", obj.type_name(), name));
  }
}

value get_item(const value& obj, const value& key) {
  if (obj.type() == value::kind::undefined) raise(obj.as_string().empty() ? "undefined value" : obj.as_string());
  if (obj.is_mapping()) {
    if (key.is_string())
      if (const value* v = obj.as_dict().find(key.as_string())) return *v;
    if (key.is_string()) return get_attribute(obj, key.as_string());
    return value::undefined(fmt::format("'dict object' has no attribute {}", key.repr()));
  }
  if ((obj.type() == value::kind::list || obj.is_string()) &&
      (key.type() == value::kind::integer || key.type() == value::kind::boolean)) {
    value_list items = iterate(obj);
    auto n = static_cast<std::int64_t>(items.size());
    std::int64_t i = key.as_int() < 0 ? key.as_int() + n : key.as_int();
    if (i < 0 || i >= n) return value::undefined(fmt::format("{} index out of range", obj.type_name()));
    return items[static_cast<std::size_t>(i)];
  }
  if (key.is_string()) return get_attribute(obj, key.as_string());
  return value::undefined(fmt::format("'{}' object has no item {}", obj.type_name(), key.repr()));
}

value get_slice(const value& obj, const value& start, const value& stop, const value& step) {
  if (obj.type() != value::kind::list && !obj.is_string()) raise(fmt::format("'{}' object is not subscriptable", obj.type_name()));
  auto bound = [](const value& v, std::int64_t fallback) {
    if (v.is_none()) return fallback;
    if (v.type() != value::kind::integer && v.type() != value::kind::boolean) raise("slice indices must be integers or None");
    return v.as_int();
  };
  value_list items = iterate(obj);
  const auto n = static_cast<std::int64_t>(items.size());
  const std::int64_t s = bound(step, 1);
  if (s == 0) raise("slice step cannot be zero");
  // Python's PySlice_AdjustIndices.
  auto adjust = [&](const value& v, std::int64_t fallback) {
    if (v.is_none()) return fallback;
    std::int64_t i = bound(v, 0);
    if (i < 0) i = std::max<std::int64_t>(i + n, s < 0 ? -1 : 0);
    else if (i >= n) i = s < 0 ? n - 1 : n;
    return i;
  };
  std::int64_t b = adjust(start, s < 0 ? n - 1 : 0), e = adjust(stop, s < 0 ? -1 : n);
  value_list out;
  for (std::int64_t i = b; s > 0 ? i < e : i > e; i += s) out.push_back(items[static_cast<std::size_t>(i)]);
  if (obj.type() == value::kind::list) return value::list(std::move(out));
  std::string joined;
  for (const auto& c : out) joined += c.as_string();
  return value::string(std::move(joined));
}

value apply_filter(const std::string& name, const value& subject, const value_list& args, const keyword_args& kwargs) {
  const value none = value::none();
  if (name == "trim") return value::string(strip(subject.str(), arg(args, kwargs, 0, "chars", none), true, true));
  if (name == "tojson") {
    value indent = arg(args, kwargs, 0, "indent", none);
    value sort_keys = arg(args, kwargs, 3, "sort_keys", value::boolean(false));
    auto json = to_json(subject, indent.is_none() ? std::nullopt : std::optional<int>(static_cast<int>(indent.as_int())),
                        sort_keys.truthy());
    if (!json) raise(fmt::format("Object of type {} is not JSON serializable", subject.type_name()));
    return value::string(*json);
  }
  if (name == "length" || name == "count") return value::integer(length_of(subject));
  if (name == "upper") return value::string(map_ascii(subject.str(), [](int c) { return std::toupper(c); }));
  if (name == "lower") return value::string(map_ascii(subject.str(), [](int c) { return std::tolower(c); }));
  if (name == "capitalize") return value::string(capitalize(subject.str()));
  if (name == "title") return value::string(title(subject.str()));
  if (name == "string") return value::string(subject.str());
  if (name == "safe") return subject;
  if (name == "items") {
    if (subject.is_undefined()) return value::list({});
    if (!subject.is_mapping()) raise("Can only get item pairs from a mapping.");
    return dict_method(subject, "items").as_function()({}, {});
  }
  if (name == "list") return value::list(iterate(subject));
  if (name == "first" || name == "last") {
    value_list items = iterate(subject);
    if (items.empty()) return value::undefined(fmt::format("no {} item, sequence was empty", name));
    return name == "first" ? items.front() : items.back();
  }
  if (name == "join") {
    const std::string separator = arg(args, kwargs, 0, "d", value::string("")).str();
    value attribute = arg(args, kwargs, 1, "attribute", none);
    std::string out;
    bool first = true;
    for (const auto& item : iterate(subject)) {
      out += (first ? "" : separator) + (attribute.is_string() ? get_attribute(item, attribute.as_string()) : item).str();
      first = false;
    }
    return value::string(std::move(out));
  }
  if (name == "default" || name == "d") {
    bool boolean = arg(args, kwargs, 1, "boolean", value::boolean(false)).truthy();
    bool use_default = subject.is_undefined() || (boolean && !subject.truthy());
    return use_default ? arg(args, kwargs, 0, "default_value", value::string("")) : subject;
  }
  if (name == "int") {
    if (subject.is_numeric()) return value::integer(subject.type() == value::kind::number ? static_cast<std::int64_t>(subject.as_double()) : subject.as_int());
    try {
      return value::integer(std::stoll(subject.str()));
    } catch (...) {
      return arg(args, kwargs, 0, "default", value::integer(0));
    }
  }
  if (name == "float") {
    if (subject.is_numeric()) return value::number(subject.as_double());
    try {
      return value::number(std::stod(subject.str()));
    } catch (...) {
      return arg(args, kwargs, 0, "default", value::number(0));
    }
  }
  if (name == "abs") {
    if (!subject.is_numeric()) raise(fmt::format("bad operand type for abs(): '{}'", subject.type_name()));
    return subject.type() == value::kind::number ? value::number(std::abs(subject.as_double()))
                                                 : value::integer(std::abs(subject.as_int()));
  }
  if (name == "replace") {
    if (args.size() < 2) raise("replace takes two arguments");
    return value::string(replace(subject.str(), args[0].str(), args[1].str(), arg(args, kwargs, 2, "count", value::integer(-1)).as_int()));
  }
  if (name == "select" || name == "reject") return select(subject, args, name == "select", false);
  if (name == "selectattr" || name == "rejectattr") return select(subject, args, name == "selectattr", true);
  if (name == "map") {
    value attribute = arg({}, kwargs, 0, "attribute", none);
    value_list out;
    for (const auto& item : iterate(subject)) {
      if (attribute.is_string()) out.push_back(get_attribute(item, attribute.as_string()));
      else if (!args.empty()) out.push_back(apply_filter(need_string(args[0], "map").as_string(), item, value_list(args.begin() + 1, args.end()), {}));
      else raise("map needs a filter name or attribute=");
    }
    return value::list(std::move(out));
  }
  raise(fmt::format("no filter named '{}'", name));
}

bool apply_test(const std::string& name, const value& subject, const value_list& args) {
  using k = value::kind;
  const k t = subject.type();
  auto other = [&]() -> const value& {
    if (args.empty()) raise(fmt::format("test '{}' takes an argument", name));
    return args[0];
  };
  if (name == "defined") return t != k::undefined;
  if (name == "undefined") return t == k::undefined;
  if (name == "none") return t == k::none;
  if (name == "boolean") return t == k::boolean;
  if (name == "true") return t == k::boolean && subject.as_bool();
  if (name == "false") return t == k::boolean && !subject.as_bool();
  if (name == "integer") return t == k::integer;
  if (name == "float") return t == k::number;
  if (name == "number") return subject.is_numeric();
  if (name == "string") return t == k::string;
  if (name == "mapping") return t == k::dict;
  if (name == "iterable") return t == k::undefined || t == k::string || t == k::list || t == k::dict;
  if (name == "sequence") return t == k::string || t == k::list || t == k::dict;
  if (name == "callable") return t == k::function;
  if (name == "equalto" || name == "eq" || name == "==" || name == "sameas") return equal(subject, other());
  if (name == "ne" || name == "!=") return !equal(subject, other());
  if (name == "lt" || name == "<" || name == "gt" || name == ">" || name == "le" || name == "<=" || name == "ge" || name == ">=") {
    bool greater = name[0] == 'g' || name[0] == '>';
    auto lt = greater ? less(other(), subject) : less(subject, other());
    if (!lt) raise(fmt::format("'{}' not supported between '{}' and '{}'", name, subject.type_name(), other().type_name()));
    bool or_equal = name == "le" || name == "ge" || name.size() == 2;
    return *lt || (or_equal && equal(subject, other()));
  }
  if (name == "in") {
    const value& c = other();
    if (c.is_string()) return subject.is_string() && c.as_string().find(subject.as_string()) != std::string::npos;
    if (c.is_mapping()) return subject.is_string() && c.as_dict().find(subject.as_string());
    for (const auto& x : iterate(c))
      if (equal(x, subject)) return true;
    return false;
  }
  if (name == "odd" || name == "even" || name == "divisibleby") {
    if (t != k::integer && t != k::boolean) raise(fmt::format("test '{}' needs an integer", name));
    std::int64_t d = name == "divisibleby" ? other().as_int() : 2;
    if (d == 0) raise("integer division or modulo by zero");
    bool divisible = subject.as_int() % d == 0;
    return name == "odd" ? !divisible : divisible;
  }
  if (name == "lower" || name == "upper") {
    std::string s = subject.str();
    bool cased = false;
    for (unsigned char c : s) {
      if (!std::isalpha(c)) continue;
      cased = true;
      if (name == "lower" ? std::isupper(c) : std::islower(c)) return false;
    }
    return cased;
  }
  raise(fmt::format("no test named '{}'", name));
}

value builtin_global(const std::string& name) {
  if (name == "range") {
    return value::function([](const value_list& a, const keyword_args&) {
      if (a.empty() || a.size() > 3) raise("range expects 1 to 3 integer arguments");
      std::int64_t start = a.size() == 1 ? 0 : a[0].as_int();
      std::int64_t stop = a.size() == 1 ? a[0].as_int() : a[1].as_int();
      std::int64_t step = a.size() == 3 ? a[2].as_int() : 1;
      if (step == 0) raise("range() arg 3 must not be zero");
      value_list out;
      for (std::int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
        if (out.size() >= 100000) raise("range too big");  // the sandbox's MAX_RANGE
        out.push_back(value::integer(i));
      }
      return value::list(std::move(out));
    });
  }
  if (name == "namespace" || name == "dict") {
    bool ns = name == "namespace";
    return value::function([ns](const value_list& a, const keyword_args& k) {
      value_dict d;
      for (const auto& positional : a) {
        if (!positional.is_mapping()) raise("namespace()/dict() take a mapping or keyword arguments");
        for (const auto& [key, v] : positional.as_dict().entries) d.set(key, v);
      }
      for (const auto& [key, v] : k) d.set(key, v);
      return ns ? value::make_namespace(std::move(d)) : value::dict(std::move(d));
    });
  }
  return value();
}

}  // namespace crucible::policy::jinja
