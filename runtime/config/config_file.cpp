#include "runtime/config/config_file.hpp"

#include <algorithm>
#include <filesystem>
#include <limits>

#include <fmt/format.h>
#include <toml++/toml.h>

namespace crucible::config {

namespace {
const char* type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::array: return "an array";
    case toml::node_type::table: return "a table";
    default: return "a date or time";
  }
}
}  // namespace

section::section(const toml::table* table, std::string file, std::string name)
    : table_(table), file_(std::move(file)), name_(std::move(name)) {}

std::string section::where(const toml::node* n) const {
  if (n && n->source().begin.line > 0)
    return fmt::format("{}:{}:{}", file_, n->source().begin.line, n->source().begin.column);
  return file_;
}

const toml::node* section::find(const char* key) {
  read_.insert(key);
  return table_ ? table_->get(key) : nullptr;
}

error section::type_error(const char* key, const toml::node& n, const char* expected) const {
  return make_error(errc::invalid_argument,
                    fmt::format("{}: [{}] {}: expected {}, got {}", where(&n), name_, key, expected, type_name(n)));
}

status section::read(const char* key, std::string& out) {
  auto* n = find(key);
  if (!n) return {};
  if (!n->is_string()) return type_error(key, *n, "a string");
  out = **n->as_string();
  return {};
}

status section::read(const char* key, bool& out) {
  auto* n = find(key);
  if (!n) return {};
  if (!n->is_boolean()) return type_error(key, *n, "a boolean");
  out = **n->as_boolean();
  return {};
}

status section::read(const char* key, std::int64_t& out) {
  auto* n = find(key);
  if (!n) return {};
  if (!n->is_integer()) return type_error(key, *n, "an integer");
  out = **n->as_integer();
  return {};
}

status section::read(const char* key, std::uint64_t& out) {
  std::int64_t v = static_cast<std::int64_t>(out);
  CRUCIBLE_TRY(read(key, v));
  if (v < 0)
    return make_error(errc::invalid_argument,
                      fmt::format("{}: [{}] {}: must not be negative, got {}", where(table_->get(key)), name_, key, v));
  out = static_cast<std::uint64_t>(v);
  return {};
}

status section::read(const char* key, std::uint32_t& out) {
  std::uint64_t v = out;
  CRUCIBLE_TRY(read(key, v));
  if (v > std::numeric_limits<std::uint32_t>::max())
    return make_error(errc::invalid_argument,
                      fmt::format("{}: [{}] {}: {} is too large", where(table_->get(key)), name_, key, v));
  out = static_cast<std::uint32_t>(v);
  return {};
}

status section::read(const char* key, double& out) {
  auto* n = find(key);
  if (!n) return {};
  if (n->is_integer()) {
    out = static_cast<double>(**n->as_integer());
    return {};
  }
  if (!n->is_floating_point()) return type_error(key, *n, "a number");
  out = **n->as_floating_point();
  return {};
}

status section::read(const char* key, std::vector<std::string>& out) {
  auto* n = find(key);
  if (!n) return {};
  if (!n->is_array()) return type_error(key, *n, "an array of strings");
  std::vector<std::string> values;
  for (auto& e : *n->as_array()) {
    if (!e.is_string()) return type_error(key, e, "an array of strings");
    values.push_back(**e.as_string());
  }
  out = std::move(values);
  return {};
}

status section::read(const char* key, std::chrono::milliseconds& out) {
  std::uint64_t v = static_cast<std::uint64_t>(out.count());
  CRUCIBLE_TRY(read(key, v));
  out = std::chrono::milliseconds(v);
  return {};
}

status section::read(const char* key, std::chrono::seconds& out) {
  std::uint64_t v = static_cast<std::uint64_t>(out.count());
  CRUCIBLE_TRY(read(key, v));
  out = std::chrono::seconds(v);
  return {};
}

status section::finish() const {
  if (!table_) return {};
  for (auto& [k, n] : *table_) {
    if (!read_.count(std::string(k.str())))
      return make_error(errc::invalid_argument,
                        fmt::format("{}: [{}] unknown key '{}' (see docs/configuration.md for the keys of [{}])",
                                    where(&n), name_, k.str(), name_));
  }
  return {};
}

result<file> file::load(const std::string& path) {
  if (!std::filesystem::exists(path)) return make_error(errc::not_found, "config file '" + path + "' does not exist");
  file f;
  f.path_ = path;
  try {
    f.root_ = std::make_shared<toml::table>(toml::parse_file(path));
  } catch (const toml::parse_error& e) {
    return make_error(errc::invalid_argument, fmt::format("{}:{}:{}: {}", path, e.source().begin.line,
                                                          e.source().begin.column, e.description()));
  }
  return f;
}

file file::empty() {
  file f;
  f.root_ = std::make_shared<toml::table>();
  f.path_ = "(defaults)";
  return f;
}

section file::get(const std::string& name) const {
  auto* n = root_->get(name);
  return section(n ? n->as_table() : nullptr, path_, name);
}

status file::check_sections(const std::vector<std::string>& known) const {
  for (auto& [k, n] : *root_) {
    bool ok = std::find(known.begin(), known.end(), std::string(k.str())) != known.end();
    if (!ok)
      return make_error(errc::invalid_argument,
                        fmt::format("{}:{}:{}: unknown section [{}] (known: {})", path_, n.source().begin.line,
                                    n.source().begin.column, k.str(), fmt::join(known, ", ")));
    if (!n.is_table())
      return make_error(errc::invalid_argument, fmt::format("{}:{}: '{}' must be a [section]", path_,
                                                            n.source().begin.line, k.str()));
  }
  return {};
}

}  // namespace crucible::config
