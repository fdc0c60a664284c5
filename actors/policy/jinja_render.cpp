// Rendering a parsed template (jinja_template.hpp): statements and
// expressions with Python's semantics. Failures travel as a C++ exception
// inside this file only and leave render() as an error value.
#include <cmath>

#include <fmt/format.h>

#include "actors/policy/jinja_ast.hpp"

namespace crucible::policy::jinja {

namespace {

struct render_failure {
  position at;
  std::string message;
};

enum class flow { next, break_, continue_ };

std::string undefined_message(const value& v) {
  return v.as_string().empty() ? "an undefined value was used" : v.as_string();
}

class renderer {
 public:
  explicit renderer(const value_dict& globals) : globals_(globals) { frames_.emplace_back(); }

  std::string run(const template_node& root) {
    exec(root.body);
    return std::move(out_);
  }

 private:
  [[noreturn]] static void fail(position at, std::string message) { throw render_failure{at, std::move(message)}; }

  value lookup(const std::string& name) const {
    for (auto it = frames_.rbegin(); it != frames_.rend(); ++it)
      if (const value* v = it->find(name)) return *v;
    if (const value* v = globals_.find(name)) return *v;
    value b = builtin_global(name);
    if (!b.is_undefined()) return b;
    return value::undefined(fmt::format("'{}' is undefined", name));
  }

  flow exec(const node_list& nodes) {
    for (const auto& n : nodes) {
      flow f = exec(*n);
      if (f != flow::next) return f;
    }
    return flow::next;
  }

  flow exec(const template_node& n) {
    using k = template_node::kind;
    switch (n.type) {
      case k::text: out_ += n.text; return flow::next;
      case k::output: out_ += eval(*n.expr).str(); return flow::next;
      case k::body: return exec(n.body);
      case k::break_: return flow::break_;
      case k::continue_: return flow::continue_;
      case k::if_:
        for (const auto& [cond, body] : n.branches)
          if (eval(*cond).truthy()) return exec(body);
        return exec(n.otherwise);
      case k::set: assign(n); return flow::next;
      case k::for_: return loop(n);
    }
    return flow::next;
  }

  void bind(value_dict& frame, const std::vector<std::string>& targets, const value& v, position at) {
    if (targets.size() == 1) {
      frame.set(targets[0], v);
      return;
    }
    if (v.type() != value::kind::list || v.as_list().size() != targets.size())
      fail(at, fmt::format("cannot unpack {} into {} names", v.type_name(), targets.size()));
    for (std::size_t i = 0; i < targets.size(); ++i) frame.set(targets[i], v.as_list()[i]);
  }

  void assign(const template_node& n) {
    value v;
    if (n.expr) {
      v = eval(*n.expr);
    } else {
      std::string saved = std::move(out_);
      out_.clear();
      exec(n.body);
      v = value::string(std::move(out_));
      out_ = std::move(saved);
    }
    if (!n.attribute.empty()) {
      value target = lookup(n.targets[0]);
      if (target.type() != value::kind::ns)
        fail(n.at, fmt::format("cannot assign attribute on non-namespace object '{}'", n.targets[0]));
      target.mutable_namespace().set(n.attribute, std::move(v));
      return;
    }
    bind(frames_.back(), n.targets, v, n.at);
  }

  flow loop(const template_node& n) {
    value iterable = eval(*n.expr);
    if (iterable.is_none() || iterable.is_numeric() || iterable.type() == value::kind::function)
      fail(n.expr->at, fmt::format("'{}' object is not iterable", iterable.type_name()));
    value_list items = iterate(iterable);
    if (n.filter) {
      value_list kept;
      for (auto& item : items) {
        frames_.emplace_back();
        bind(frames_.back(), n.targets, item, n.at);
        bool keep = eval(*n.filter).truthy();
        frames_.pop_back();
        if (keep) kept.push_back(std::move(item));
      }
      items = std::move(kept);
    }
    if (items.empty()) return exec(n.otherwise);
    const auto length = static_cast<std::int64_t>(items.size());
    for (std::int64_t i = 0; i < length; ++i) {
      value_dict loop_info;
      loop_info.set("index0", value::integer(i));
      loop_info.set("index", value::integer(i + 1));
      loop_info.set("revindex0", value::integer(length - i - 1));
      loop_info.set("revindex", value::integer(length - i));
      loop_info.set("first", value::boolean(i == 0));
      loop_info.set("last", value::boolean(i == length - 1));
      loop_info.set("length", value::integer(length));
      loop_info.set("depth", value::integer(1));
      loop_info.set("depth0", value::integer(0));
      loop_info.set("previtem", i > 0 ? items[static_cast<std::size_t>(i - 1)] : value::undefined("there is no previous item"));
      loop_info.set("nextitem", i + 1 < length ? items[static_cast<std::size_t>(i + 1)] : value::undefined("there is no next item"));
      loop_info.set("cycle", value::function([i](const value_list& args, const keyword_args&) {
        if (args.empty()) throw raised{"no items for cycling given"};
        return args[static_cast<std::size_t>(i) % args.size()];
      }));
      frames_.emplace_back();  // a set inside the body lasts one iteration, as in Jinja
      frames_.back().set("loop", value::dict(std::move(loop_info)));
      bind(frames_.back(), n.targets, items[static_cast<std::size_t>(i)], n.at);
      flow f = exec(n.body);
      frames_.pop_back();
      if (f == flow::break_) break;
    }
    return flow::next;
  }

  value eval(const expression& e) {
    try {
      return eval_unguarded(e);
    } catch (const raised& r) {
      fail(e.at, r.message);
    }
  }

  static void need_defined(const value& v, position at) {
    if (v.is_undefined()) fail(at, undefined_message(v));
  }

  std::pair<value_list, keyword_args> arguments(const expression& e) {
    value_list args;
    keyword_args kwargs;
    const std::size_t first_keyword = e.operands.size() - e.keywords.size();
    for (std::size_t i = 1; i < e.operands.size(); ++i) {
      value v = eval(*e.operands[i]);
      if (i < first_keyword) args.push_back(std::move(v));
      else kwargs.emplace_back(e.keywords[i - first_keyword], std::move(v));
    }
    return {std::move(args), std::move(kwargs)};
  }

  value eval_unguarded(const expression& e) {
    using k = expression::kind;
    switch (e.type) {
      case k::literal: return e.constant;
      case k::name: return lookup(e.text);
      case k::attribute: {
        value obj = eval(*e.operands[0]);
        need_defined(obj, e.at);
        return get_attribute(obj, e.text);
      }
      case k::item: {
        value obj = eval(*e.operands[0]);
        need_defined(obj, e.at);
        return get_item(obj, eval(*e.operands[1]));
      }
      case k::slice: {
        value obj = eval(*e.operands[0]);
        need_defined(obj, e.at);
        auto part = [&](std::size_t i) { return e.operands[i] ? eval(*e.operands[i]) : value::none(); };
        return get_slice(obj, part(1), part(2), part(3));
      }
      case k::call: {
        value callee = eval(*e.operands[0]);
        need_defined(callee, e.at);
        if (callee.type() != value::kind::function) fail(e.at, fmt::format("'{}' object is not callable", callee.type_name()));
        auto [args, kwargs] = arguments(e);
        return callee.as_function()(args, kwargs);
      }
      case k::filter: {
        value subject = eval(*e.operands[0]);
        auto [args, kwargs] = arguments(e);
        return apply_filter(e.text, subject, args, kwargs);
      }
      case k::test: {
        value subject = eval(*e.operands[0]);
        auto [args, kwargs] = arguments(e);
        return value::boolean(apply_test(e.text, subject, args) != e.negated);
      }
      case k::unary: return unary(e);
      case k::binary: return binary(e);
      case k::conditional:
        if (eval(*e.operands[0]).truthy()) return eval(*e.operands[1]);
        return e.operands[2] ? eval(*e.operands[2]) : value::undefined("the condition was false and there is no else");
      case k::list: {
        value_list items;
        for (const auto& o : e.operands) items.push_back(eval(*o));
        return value::list(std::move(items));
      }
      case k::dict: {
        value_dict d;
        for (std::size_t i = 0; i < e.operands.size(); ++i) d.set(e.keywords[i], eval(*e.operands[i]));
        return value::dict(std::move(d));
      }
    }
    return {};
  }

  value unary(const expression& e) {
    value v = eval(*e.operands[0]);
    if (e.text == "not") return value::boolean(!v.truthy());
    need_defined(v, e.at);
    if (!v.is_numeric()) fail(e.at, fmt::format("bad operand type for unary {}: '{}'", e.text, v.type_name()));
    if (e.text == "+") return v.type() == value::kind::boolean ? value::integer(v.as_int()) : v;
    if (v.type() == value::kind::number) return value::number(-v.as_double());
    return value::integer(-v.as_int());
  }

  value binary(const expression& e) {
    const std::string& op = e.text;
    value a = eval(*e.operands[0]);
    if (op == "and") return a.truthy() ? eval(*e.operands[1]) : a;
    if (op == "or") return a.truthy() ? a : eval(*e.operands[1]);
    value b = eval(*e.operands[1]);
    if (op == "~") return value::string(a.str() + b.str());
    if (op == "==") return value::boolean(equal(a, b));
    if (op == "!=") return value::boolean(!equal(a, b));
    if (op == "in" || op == "notin") return value::boolean(contains(b, a, e.at) == (op == "in"));
    need_defined(a, e.at);
    need_defined(b, e.at);
    if (op == "<" || op == ">" || op == "<=" || op == ">=") {
      auto lt = op[0] == '<' ? less(a, b) : less(b, a);
      if (!lt) fail(e.at, fmt::format("'{}' not supported between instances of '{}' and '{}'", op, a.type_name(), b.type_name()));
      return value::boolean(op.size() == 1 ? *lt : (*lt || equal(a, b)));
    }
    return arithmetic(op, a, b, e.at);
  }

  static bool contains(const value& container, const value& item, position at) {
    switch (container.type()) {
      case value::kind::undefined: return false;
      case value::kind::string:
        if (!item.is_string()) fail(at, "'in <string>' requires string as left operand");
        return container.as_string().find(item.as_string()) != std::string::npos;
      case value::kind::list:
        for (const auto& x : container.as_list())
          if (equal(x, item)) return true;
        return false;
      case value::kind::dict:
      case value::kind::ns: return item.is_string() && container.as_dict().find(item.as_string()) != nullptr;
      default: fail(at, fmt::format("argument of type '{}' is not iterable", container.type_name()));
    }
  }

  static value arithmetic(const std::string& op, const value& a, const value& b, position at) {
    auto type_error = [&] {
      fail(at, fmt::format("unsupported operand type(s) for {}: '{}' and '{}'", op, a.type_name(), b.type_name()));
    };
    if (op == "+") {
      if (a.is_string() && b.is_string()) return value::string(a.as_string() + b.as_string());
      if (a.type() == value::kind::list && b.type() == value::kind::list) {
        value_list joined = a.as_list();
        joined.insert(joined.end(), b.as_list().begin(), b.as_list().end());
        return value::list(std::move(joined));
      }
    }
    if (op == "*" && (a.is_string() || b.is_string())) {
      const value& s = a.is_string() ? a : b;
      const value& n = a.is_string() ? b : a;
      if (n.type() != value::kind::integer && n.type() != value::kind::boolean) type_error();
      std::string out;
      for (std::int64_t i = 0; i < n.as_int(); ++i) out += s.as_string();
      return value::string(std::move(out));
    }
    if (!a.is_numeric() || !b.is_numeric()) type_error();
    const bool floating = a.type() == value::kind::number || b.type() == value::kind::number;
    if (op == "/") {
      if (b.as_double() == 0) fail(at, "division by zero");
      return value::number(a.as_double() / b.as_double());
    }
    if (floating) {
      double x = a.as_double(), y = b.as_double();
      if (op == "+") return value::number(x + y);
      if (op == "-") return value::number(x - y);
      if (op == "*") return value::number(x * y);
      if (op == "**") return value::number(std::pow(x, y));
      if (y == 0) fail(at, "float division by zero");
      if (op == "//") return value::number(std::floor(x / y));
      double r = std::fmod(x, y);
      if (r != 0 && ((r < 0) != (y < 0))) r += y;
      return value::number(r);
    }
    std::int64_t x = a.as_int(), y = b.as_int();
    if (op == "+") return value::integer(x + y);
    if (op == "-") return value::integer(x - y);
    if (op == "*") return value::integer(x * y);
    if (op == "**") {
      if (y < 0) return value::number(std::pow(static_cast<double>(x), static_cast<double>(y)));
      std::int64_t r = 1;
      for (std::int64_t i = 0; i < y; ++i) r *= x;
      return value::integer(r);
    }
    if (y == 0) fail(at, "integer division or modulo by zero");
    std::int64_t q = x / y, r = x % y;
    if (r != 0 && ((r < 0) != (y < 0))) {
      --q;
      r += y;
    }
    return value::integer(op == "//" ? q : r);
  }

  const value_dict& globals_;
  std::vector<value_dict> frames_;
  std::string out_;
};

}  // namespace

result<std::string> parsed_template::render(const value_dict& variables) const {
  try {
    renderer r(variables);
    return r.run(*root_);
  } catch (const render_failure& f) {
    return make_error(errc::invalid_argument, fmt::format("{}:{}:{}: {}", name_, f.at.line, f.at.column, f.message));
  }
}

}  // namespace crucible::policy::jinja
