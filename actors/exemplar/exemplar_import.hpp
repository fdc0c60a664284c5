// Reading exemplars from files: JSON Lines of {"task", "code", "score"
// [, "id"]}, or CUDA-L1's released rows {"level_id", "task_id",
// "custom_code", "score_default"} (task becomes "level<level_id>/<task_id>").
// Rows without an id get one derived from task and code, so importing a file
// twice changes nothing.
//
// CUDA-L1's score_default was measured on another GPU by another harness, so
// it is never taken as a reward here: a CUDA-L1 row takes the reward this
// project's evaluator settled for it (settled_results, `--settled`), and is
// left out, counted, when it has no code (CUDA-L1 released none for that
// task: custom_code null), when it was not measured here, or when it did
// not settle `ok`.
//
// Who calls it: the `crucible exemplars import` command. Errors:
// errc::invalid_argument naming file, line and field; errc::io when the file
// cannot be read.
#pragma once

#include <istream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "actors/exemplar/exemplar_store.hpp"
#include "runtime/base/result.hpp"

namespace crucible::exemplar {

// The evaluator's results that CUDA-L1 rows take their rewards from: JSON
// Lines with "job", "status" and "reward" (crucible-bench-eval --json-out,
// tools/gpu/cuda_l1_suite.py's results.jsonl), by job name; a CUDA-L1 row of
// file STEM.json (a100.json) is job "STEM/L<level>-<task>" (a100/L1-19).
struct settled_result {
  std::string status;  // "ok", "incorrect", "hack", ...
  double reward = 0;
};
using settled_results = std::map<std::string, settled_result>;
result<settled_results> read_settled_results(const std::string& path);

// What an import left out, by reason.
struct import_counts {
  std::size_t no_code = 0;       // CUDA-L1 rows with custom_code null
  std::size_t not_measured = 0;  // CUDA-L1 rows with no result in settled
  std::size_t not_ok = 0;        // CUDA-L1 rows whose result is not ok
};

// Parses one line (1-based number `line` of `file`, for messages) of the
// first form; a CUDA-L1 row is an error that says to import with settled
// results.
result<exemplar_input> parse_exemplar_line(std::string_view text, const std::string& file, std::size_t line);

// Parses every non-blank line of in; stops at the first bad one. CUDA-L1 rows
// need settled (else the first is an error saying so); the rows left out are
// added to counts.
result<std::vector<exemplar_input>> parse_exemplar_lines(std::istream& in, const std::string& file,
                                                         const settled_results* settled = nullptr,
                                                         import_counts* counts = nullptr);
result<std::vector<exemplar_input>> read_exemplar_file(const std::string& path,
                                                       const settled_results* settled = nullptr,
                                                       import_counts* counts = nullptr);

// A stable id for an exemplar without one: "x" + 16 hex digits of a 64-bit
// FNV-1a hash of task, a NUL byte and code.
std::string derived_exemplar_id(std::string_view task, std::string_view code);

}  // namespace crucible::exemplar
