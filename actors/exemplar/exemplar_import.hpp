// Reading exemplars from files: JSON Lines of {"task", "code", "score"
// [, "id"]}, or CUDA-L1's released rows {"level_id", "task_id",
// "custom_code", "score_default"} (task "level<level_id>/<task_id>", or the
// task id of its KernelBench file under a tasks folder: level1/19_ReLU).
// Rows without an id get one derived from task and code, so importing a file
// twice changes nothing.
//
// CUDA-L1's score_default was measured on another GPU by another harness, so
// it is never taken as a reward here: a CUDA-L1 row takes the reward this
// project's evaluator settled for it (cuda_l1_import::settled, `--settled`),
// and is left out, counted, when it has no code (CUDA-L1 released none for
// that task: custom_code null), when it was not measured here, when it did
// not settle `ok`, or (with a tasks folder) when the folder has no task file
// for it or a different one than the ref_code it was measured against.
//
// Who calls it: the `crucible exemplars import` command, and the exemplar
// service's seeding ([run] exemplar_seed, runtime/roles/roles.hpp). Errors:
// errc::invalid_argument naming file, line and field; errc::io when the file
// cannot be read.
#pragma once

#include <filesystem>
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
// Several results files, a later file's row winning for the same job.
result<settled_results> read_settled_results(const std::vector<std::string>& paths);

// How CUDA-L1 rows are imported.
struct cuda_l1_import {
  settled_results settled;  // the rewards the rows take
  // A folder of KernelBench's files (level1/19_ReLU.py) that the rollouts
  // take their tasks from ([run] tasks_dir): a row's task is named as the
  // rollouts name it (level1/19_ReLU), and the row is left out when the file
  // is missing or differs from its ref_code. Empty (the default): the task is
  // "level<level_id>/<task_id>".
  std::filesystem::path tasks_dir;
};

// What an import left out, by reason.
struct import_counts {
  std::size_t no_code = 0;            // CUDA-L1 rows with custom_code null
  std::size_t not_measured = 0;       // CUDA-L1 rows with no result in settled
  std::size_t not_ok = 0;             // CUDA-L1 rows whose result is not ok
  std::size_t no_task_file = 0;       // CUDA-L1 rows without a task file under tasks_dir
  std::size_t reference_differs = 0;  // ... whose task file there is not their ref_code
  std::size_t total() const { return no_code + not_measured + not_ok + no_task_file + reference_differs; }
};

// Parses one line (1-based number `line` of `file`, for messages) of the
// first form; a CUDA-L1 row is an error that says to import with settled
// results.
result<exemplar_input> parse_exemplar_line(std::string_view text, const std::string& file, std::size_t line);

// Parses every non-blank line of in; stops at the first bad one. CUDA-L1 rows
// need cuda_l1 (else the first is an error saying so); the rows left out are
// added to counts.
result<std::vector<exemplar_input>> parse_exemplar_lines(std::istream& in, const std::string& file,
                                                         const cuda_l1_import* cuda_l1 = nullptr,
                                                         import_counts* counts = nullptr);
result<std::vector<exemplar_input>> read_exemplar_file(const std::string& path,
                                                       const cuda_l1_import* cuda_l1 = nullptr,
                                                       import_counts* counts = nullptr);

// Exemplars read from files, and the rows left out.
struct exemplar_batch {
  std::vector<exemplar_input> rows;
  import_counts left_out;
};
// Every file in order (read_exemplar_file); stops at the first bad one.
result<exemplar_batch> read_exemplar_files(const std::vector<std::string>& files,
                                           const cuda_l1_import* cuda_l1 = nullptr);

// What insert_exemplars did.
struct import_summary {
  std::size_t rows = 0;        // exemplars read
  std::size_t inserted = 0;    // new in the store
  std::size_t duplicates = 0;  // there already (an import repeated)
  import_counts left_out;
};
// "3 rows, 2 inserted, 1 already present; left out: 1 without code, ..."
std::string to_string(const import_summary& s);

// Inserts the batch's rows in batches of 10000 (one atomic write each).
// Errors: the store's.
result<import_summary> insert_exemplars(exemplar_store& store, const exemplar_batch& batch);

// A stable id for an exemplar without one: "x" + 16 hex digits of a 64-bit
// FNV-1a hash of task, a NUL byte and code.
std::string derived_exemplar_id(std::string_view task, std::string_view code);

}  // namespace crucible::exemplar
