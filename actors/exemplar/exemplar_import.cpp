#include "actors/exemplar/exemplar_import.hpp"

#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace crucible::exemplar {
namespace {

using json = nlohmann::json;

error bad(const std::string& file, std::size_t line, std::string_view field, std::string_view what) {
  if (field.empty()) return make_error(errc::invalid_argument, fmt::format("{}:{}: {}", file, line, what));
  return make_error(errc::invalid_argument, fmt::format("{}:{}: field '{}': {}", file, line, field, what));
}

result<std::string> string_field(const json& row, const char* name, const std::string& file, std::size_t line) {
  auto it = row.find(name);
  if (it == row.end()) return bad(file, line, name, "missing");
  if (!it->is_string()) return bad(file, line, name, fmt::format("expected a string, found {}", it->type_name()));
  return it->get<std::string>();
}

result<double> number_field(const json& row, const char* name, const std::string& file, std::size_t line) {
  auto it = row.find(name);
  if (it == row.end()) return bad(file, line, name, "missing");
  if (!it->is_number()) return bad(file, line, name, fmt::format("expected a number, found {}", it->type_name()));
  double v = it->get<double>();
  if (!std::isfinite(v)) return bad(file, line, name, "not finite");
  return v;
}

// level_id and task_id come as integers or strings.
result<std::string> id_field(const json& row, const char* name, const std::string& file, std::size_t line) {
  auto it = row.find(name);
  if (it == row.end()) return bad(file, line, name, "missing");
  if (it->is_number_integer()) return std::to_string(it->get<long long>());
  if (it->is_string() && !it->get<std::string>().empty()) return it->get<std::string>();
  return bad(file, line, name, fmt::format("expected an integer or a non-empty string, found {}", it->type_name()));
}

}  // namespace

std::string derived_exemplar_id(std::string_view task, std::string_view code) {
  std::uint64_t h = 1469598103934665603ull;
  auto mix = [&](std::string_view s) {
    for (unsigned char c : s) {
      h ^= c;
      h *= 1099511628211ull;
    }
  };
  mix(task);
  mix(std::string_view("\0", 1));
  mix(code);
  return fmt::format("x{:016x}", h);
}

result<exemplar_input> parse_exemplar_line(std::string_view text, const std::string& file, std::size_t line) {
  json row = json::parse(text, nullptr, false);
  if (row.is_discarded()) return bad(file, line, "", "not valid JSON");
  if (!row.is_object()) return bad(file, line, "", "expected a JSON object");
  exemplar_input e;
  if (row.contains("custom_code")) {  // CUDA-L1's release
    auto level = id_field(row, "level_id", file, line);
    if (!level.ok()) return level.error();
    auto task = id_field(row, "task_id", file, line);
    if (!task.ok()) return task.error();
    auto code = string_field(row, "custom_code", file, line);
    if (!code.ok()) return code.error();
    auto score = number_field(row, "score_default", file, line);
    if (!score.ok()) return score.error();
    e = {"level" + *level + "/" + *task, {}, std::move(code).value(), *score};
  } else {
    auto task = string_field(row, "task", file, line);
    if (!task.ok()) return task.error();
    auto code = string_field(row, "code", file, line);
    if (!code.ok()) return code.error();
    auto score = number_field(row, "score", file, line);
    if (!score.ok()) return score.error();
    e = {std::move(task).value(), {}, std::move(code).value(), *score};
  }
  if (auto s = validate_task(e.task); !s.ok()) return bad(file, line, "task", s.error().message);
  if (e.code.empty()) return bad(file, line, row.contains("custom_code") ? "custom_code" : "code", "empty");
  if (row.contains("id")) {
    auto id = string_field(row, "id", file, line);
    if (!id.ok()) return id.error();
    if (id->empty()) return bad(file, line, "id", "empty");
    e.id = std::move(id).value();
  } else {
    e.id = derived_exemplar_id(e.task, e.code);
  }
  return e;
}

result<std::vector<exemplar_input>> parse_exemplar_lines(std::istream& in, const std::string& file) {
  std::vector<exemplar_input> out;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto e = parse_exemplar_line(text, file, line);
    if (!e.ok()) return e.error();
    out.push_back(std::move(e).value());
  }
  if (in.bad()) return make_error(errc::io, file + ": read failed");
  return out;
}

result<std::vector<exemplar_input>> read_exemplar_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(errc::io, path + ": cannot open");
  return parse_exemplar_lines(in, path);
}

}  // namespace crucible::exemplar
