// Reading exemplars from files: JSON Lines of {"task", "code", "score"
// [, "id"]}, or CUDA-L1's released rows {"level_id", "task_id",
// "custom_code", "score_default"} (task becomes "level<level_id>/<task_id>").
// Rows without an id get one derived from task and code, so importing a file
// twice changes nothing.
//
// Who calls it: the `crucible exemplars import` command. Errors:
// errc::invalid_argument naming file, line and field; errc::io when the file
// cannot be read.
#pragma once

#include <istream>
#include <string>
#include <string_view>
#include <vector>

#include "actors/exemplar/exemplar_store.hpp"
#include "runtime/base/result.hpp"

namespace crucible::exemplar {

// Parses one line (1-based number `line` of `file`, for messages).
result<exemplar_input> parse_exemplar_line(std::string_view text, const std::string& file, std::size_t line);

// Parses every non-blank line of in; stops at the first bad one.
result<std::vector<exemplar_input>> parse_exemplar_lines(std::istream& in, const std::string& file);
result<std::vector<exemplar_input>> read_exemplar_file(const std::string& path);

// A stable id for an exemplar without one: "x" + 16 hex digits of a 64-bit
// FNV-1a hash of task, a NUL byte and code.
std::string derived_exemplar_id(std::string_view task, std::string_view code);

}  // namespace crucible::exemplar
