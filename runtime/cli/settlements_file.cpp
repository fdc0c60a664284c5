#include "runtime/cli/settlements_file.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <type_traits>

#include <fmt/format.h>

namespace crucible::cli {

namespace {
using json = nlohmann::json;

// Reads one line's fields into a row, or says which field is wrong.
class line_reader {
 public:
  line_reader(const json& j, const std::string& where) : j_(j), where_(where) {}

  status text(const char* name, std::string& out, bool required) {
    auto it = j_.find(name);
    if (it == j_.end()) return required ? missing(name) : status::success();
    if (!it->is_string()) return wrong(name, "a string", *it);
    out = it->get<std::string>();
    return status::success();
  }
  status number(const char* name, double& out, bool required) {
    auto it = j_.find(name);
    if (it == j_.end()) return required ? missing(name) : status::success();
    if (!it->is_number() || !std::isfinite(it->get<double>())) return wrong(name, "a finite number", *it);
    out = it->get<double>();
    return status::success();
  }
  template <class Int>
  status integer(const char* name, Int& out) {
    auto it = j_.find(name);
    if (it == j_.end()) return status::success();
    if (!it->is_number_integer() || (std::is_unsigned_v<Int> && !it->is_number_unsigned()))
      return wrong(name, std::is_unsigned_v<Int> ? "a non-negative integer" : "an integer", *it);
    out = it->get<Int>();
    return status::success();
  }
  status flag(const char* name, bool& out) {
    auto it = j_.find(name);
    if (it == j_.end()) return status::success();
    if (!it->is_boolean()) return wrong(name, "true or false", *it);
    out = it->get<bool>();
    return status::success();
  }

 private:
  error missing(const char* name) const {
    return make_error(errc::invalid_argument, fmt::format("{}: field '{}' is missing", where_, name));
  }
  error wrong(const char* name, const char* want, const json& found) const {
    return make_error(errc::invalid_argument,
                      fmt::format("{}: field '{}' should be {}, found {}", where_, name, want, found.type_name()));
  }
  const json& j_;
  const std::string& where_;
};

result<settled_row> parse_line(const std::string& text, const std::string& where) {
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded()) return make_error(errc::invalid_argument, where + ": not valid JSON");
  if (!j.is_object()) return make_error(errc::invalid_argument, where + ": expected a JSON object");
  settled_row r;
  line_reader f(j, where);
  CRUCIBLE_TRY(f.text("candidate", r.id, true));
  CRUCIBLE_TRY(f.text("task", r.task, true));
  CRUCIBLE_TRY(f.text("status", r.status, true));
  CRUCIBLE_TRY(f.number("reward", r.reward, true));
  CRUCIBLE_TRY(f.text("group", r.group, false));
  CRUCIBLE_TRY(f.text("reason", r.reason, false));
  CRUCIBLE_TRY(f.text("code", r.code, false));
  CRUCIBLE_TRY(f.text("measurement_of", r.measurement_of, false));
  CRUCIBLE_TRY(f.number("speedup_raw", r.speedup, false));
  CRUCIBLE_TRY(f.flag("verified", r.verified));
  CRUCIBLE_TRY(f.integer("policy_version", r.policy_version));
  CRUCIBLE_TRY(f.integer("submitted_ns", r.submitted_ns));
  CRUCIBLE_TRY(f.integer("settled_ns", r.settled_ns));
  return r;
}

}  // namespace

json settlement_line(const settled_row& r) {
  json j = {{"candidate", r.id},         {"group", r.group},
            {"task", r.task},            {"status", r.status},
            {"reward", r.reward},        {"speedup_raw", r.speedup},
            {"verified", r.verified},    {"policy_version", r.policy_version},
            {"submitted_ns", r.submitted_ns}, {"settled_ns", r.settled_ns},
            {"reason", r.reason}};
  if (r.status == "Success") j["code"] = r.code;
  if (!r.measurement_of.empty()) j["measurement_of"] = r.measurement_of;
  return j;
}

result<std::vector<settled_row>> read_settlements_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return make_error(errc::not_found, path + ": no such file");
  std::ifstream in(path, std::ios::binary);
  if (!in) return make_error(errc::io, path + ": cannot be read");
  std::vector<settled_row> rows;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto row = parse_line(line, fmt::format("{}:{}", path, n));
    if (!row) return row.error();
    rows.push_back(std::move(*row));
  }
  if (in.bad()) return make_error(errc::io, path + ": read failed");
  return rows;
}

}  // namespace crucible::cli
