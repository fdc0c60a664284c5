// Reading TOML configs (configs/*.toml) onto options structs. Each component
// has one options struct and one read function that maps a [section] onto
// it; a key nobody reads, a wrong type or a value out of range is an error
// naming the file, the line and the key:
//   configs/run.toml:12:1: [hub] heartbeat_ms: expected an integer, got a string
// Used by runtime/cli on the main thread before anything starts.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "runtime/base/result.hpp"

namespace toml {
inline namespace v3 {
class table;
class node;
}  // namespace v3
}  // namespace toml

namespace crucible::config {

// One [section] of a file. Missing sections read as empty: every field
// keeps its default.
class section {
 public:
  section(const toml::table* table, std::string file, std::string name);

  status read(const char* key, std::string& out);
  status read(const char* key, bool& out);
  status read(const char* key, std::int64_t& out);
  status read(const char* key, std::uint32_t& out);
  status read(const char* key, std::uint64_t& out);
  status read(const char* key, double& out);
  status read(const char* key, std::vector<std::string>& out);
  // Integer milliseconds; the key should end in _ms.
  status read(const char* key, std::chrono::milliseconds& out);
  status read(const char* key, std::chrono::seconds& out);

  // Errors for every key in the section that no read() asked for.
  status finish() const;
  const std::string& name() const { return name_; }

 private:
  const toml::node* find(const char* key);
  error type_error(const char* key, const toml::node& n, const char* expected) const;
  std::string where(const toml::node* n) const;

  const toml::table* table_;
  std::string file_, name_;
  std::set<std::string> read_;
};

class file {
 public:
  // Parses path. Errors: errc::not_found (missing file), errc::invalid_argument
  // (TOML syntax, with line and column).
  static result<file> load(const std::string& path);
  // An empty config (every default), for commands run without --config.
  static file empty();

  section get(const std::string& name) const;
  // Errors for top-level sections not in known.
  status check_sections(const std::vector<std::string>& known) const;
  const std::string& path() const { return path_; }

 private:
  std::shared_ptr<toml::table> root_;
  std::string path_;
};

}  // namespace crucible::config
