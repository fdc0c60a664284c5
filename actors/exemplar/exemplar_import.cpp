#include "actors/exemplar/exemplar_import.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <sstream>

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

// What parse_row makes of a line: an exemplar, or a row left out (counted).
struct where {
  const std::string& file;
  std::size_t line;
  const cuda_l1_import* cuda_l1;
  import_counts* counts;
};

// KernelBench task level/task under root as the rollouts find it
// (rollout/task_schedule.hpp): ROOT/levelL/T_Name.py or ROOT/levelL/T_Name/task.py;
// its file and its id (levelL/T_Name), or nullopt when not exactly one.
struct task_file {
  std::filesystem::path file;
  std::string id;
};
std::optional<task_file> kernelbench_task(const std::filesystem::path& root, const std::string& level,
                                          const std::string& task) {
  namespace fs = std::filesystem;
  std::optional<task_file> found;
  std::error_code ec;
  const std::string folder = "level" + level;
  for (fs::directory_iterator it(root / folder, ec), end; !ec && it != end; it.increment(ec)) {
    const fs::path& p = it->path();
    if (p.filename().string().rfind(task + "_", 0) != 0) continue;
    std::optional<task_file> hit;
    if (p.extension() == ".py" && fs::is_regular_file(p))
      hit = task_file{p, folder + "/" + p.stem().string()};
    else if (fs::is_regular_file(p / "task.py"))
      hit = task_file{p / "task.py", folder + "/" + p.filename().string()};
    if (!hit) continue;
    if (found) return std::nullopt;
    found = std::move(hit);
  }
  return found;
}

std::optional<std::string> file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// A CUDA-L1 row: its code, its reward as settled here; nullopt when left out.
result<std::optional<exemplar_input>> cuda_l1_row(const json& row, const where& w) {
  auto level = id_field(row, "level_id", w.file, w.line);
  if (!level.ok()) return level.error();
  auto task = id_field(row, "task_id", w.file, w.line);
  if (!task.ok()) return task.error();
  import_counts ignored;
  import_counts& counts = w.counts ? *w.counts : ignored;
  // CUDA-L1 released no kernel for this task: null, or the text "None"
  // (16 rows of a100.json, 62 of the four files, are Python's str(None)).
  const auto& released = row["custom_code"];
  if (released.is_null() || (released.is_string() && released.get<std::string>() == "None")) {
    ++counts.no_code;
    return std::optional<exemplar_input>{};
  }
  auto code = string_field(row, "custom_code", w.file, w.line);
  if (!code.ok()) return code.error();
  if (!w.cuda_l1)
    return bad(w.file, w.line, "score_default",
               "CUDA-L1's score was measured on another GPU, not settled here; import with the evaluator's results "
               "(`--settled RESULTS.jsonl`, e.g. tools/gpu/cuda_l1_suite.py's results.jsonl)");
  const std::string job = std::filesystem::path(w.file).stem().string() + "/L" + *level + "-" + *task;
  const auto& settled = w.cuda_l1->settled;
  auto it = settled.find(job);
  if (it == settled.end()) {
    ++counts.not_measured;
    return std::optional<exemplar_input>{};
  }
  if (it->second.status != "ok") {
    ++counts.not_ok;
    return std::optional<exemplar_input>{};
  }
  std::string task_id = "level" + *level + "/" + *task;
  if (!w.cuda_l1->tasks_dir.empty()) {
    // Named as the rollouts name the task, and only when the kernel was
    // measured against that very file.
    auto t = kernelbench_task(w.cuda_l1->tasks_dir, *level, *task);
    if (!t) {
      ++counts.no_task_file;
      return std::optional<exemplar_input>{};
    }
    auto reference = string_field(row, "ref_code", w.file, w.line);
    if (!reference.ok()) return reference.error();
    if (file_text(t->file) != *reference) {
      ++counts.reference_differs;
      return std::optional<exemplar_input>{};
    }
    task_id = std::move(t->id);
  }
  return std::optional<exemplar_input>{exemplar_input{std::move(task_id), {}, std::move(code).value(), it->second.reward}};
}

result<std::optional<exemplar_input>> parse_row(std::string_view text, const where& w) {
  json row = json::parse(text, nullptr, false);
  if (row.is_discarded()) return bad(w.file, w.line, "", "not valid JSON");
  if (!row.is_object()) return bad(w.file, w.line, "", "expected a JSON object");
  exemplar_input e;
  if (row.contains("custom_code")) {  // CUDA-L1's release
    auto r = cuda_l1_row(row, w);
    if (!r.ok() || !r->has_value()) return r;
    e = std::move(**r);
  } else {
    auto task = string_field(row, "task", w.file, w.line);
    if (!task.ok()) return task.error();
    auto code = string_field(row, "code", w.file, w.line);
    if (!code.ok()) return code.error();
    auto score = number_field(row, "score", w.file, w.line);
    if (!score.ok()) return score.error();
    e = {std::move(task).value(), {}, std::move(code).value(), *score};
  }
  if (auto s = validate_task(e.task); !s.ok()) return bad(w.file, w.line, "task", s.error().message);
  if (e.code.empty()) return bad(w.file, w.line, row.contains("custom_code") ? "custom_code" : "code", "empty");
  if (row.contains("id")) {
    auto id = string_field(row, "id", w.file, w.line);
    if (!id.ok()) return id.error();
    if (id->empty()) return bad(w.file, w.line, "id", "empty");
    e.id = std::move(id).value();
  } else {
    e.id = derived_exemplar_id(e.task, e.code);
  }
  return std::optional<exemplar_input>{std::move(e)};
}

}  // namespace

result<settled_results> read_settled_results(const std::string& path) {
  std::ifstream in(path);
  if (!in) return make_error(errc::io, path + ": cannot open");
  settled_results out;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    json row = json::parse(text, nullptr, false);
    if (row.is_discarded() || !row.is_object()) return bad(path, line, "", "not a JSON object");
    auto job = string_field(row, "job", path, line);
    if (!job.ok()) return job.error();
    auto status = string_field(row, "status", path, line);
    if (!status.ok()) return status.error();
    auto reward = number_field(row, "reward", path, line);
    if (!reward.ok()) return reward.error();
    out[*job] = settled_result{*status, *reward};
  }
  return out;
}

result<settled_results> read_settled_results(const std::vector<std::string>& paths) {
  settled_results out;
  for (const auto& p : paths) {
    auto one = read_settled_results(p);
    if (!one.ok()) return one.error();
    for (auto& [job, r] : *one) out[job] = r;
  }
  return out;
}

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
  auto e = parse_row(text, where{file, line, nullptr, nullptr});
  if (!e.ok()) return e.error();
  if (!e->has_value()) return bad(file, line, "custom_code", "null or \"None\": CUDA-L1 released no kernel for this task");
  return std::move(**e);
}

result<std::vector<exemplar_input>> parse_exemplar_lines(std::istream& in, const std::string& file,
                                                         const cuda_l1_import* cuda_l1, import_counts* counts) {
  std::vector<exemplar_input> out;
  std::string text;
  for (std::size_t line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto e = parse_row(text, where{file, line, cuda_l1, counts});
    if (!e.ok()) return e.error();
    if (e->has_value()) out.push_back(std::move(**e));
  }
  if (in.bad()) return make_error(errc::io, file + ": read failed");
  return out;
}

result<std::vector<exemplar_input>> read_exemplar_file(const std::string& path, const cuda_l1_import* cuda_l1,
                                                       import_counts* counts) {
  std::ifstream in(path);
  if (!in) return make_error(errc::io, path + ": cannot open");
  return parse_exemplar_lines(in, path, cuda_l1, counts);
}

std::string to_string(const import_summary& s) {
  std::string text = fmt::format("{} rows, {} inserted, {} already present", s.rows, s.inserted, s.duplicates);
  const auto& l = s.left_out;
  if (l.total())
    text += fmt::format("; left out: {} without code, {} not measured here, {} not settled ok", l.no_code,
                        l.not_measured, l.not_ok);
  if (l.no_task_file + l.reference_differs)
    text += fmt::format(", {} without a task file, {} measured against another reference", l.no_task_file,
                        l.reference_differs);
  return text;
}

result<exemplar_batch> read_exemplar_files(const std::vector<std::string>& files, const cuda_l1_import* cuda_l1) {
  exemplar_batch batch;
  for (const auto& f : files) {
    auto part = read_exemplar_file(f, cuda_l1, &batch.left_out);
    if (!part.ok()) return part.error();
    std::move(part->begin(), part->end(), std::back_inserter(batch.rows));
  }
  return batch;
}

result<import_summary> insert_exemplars(exemplar_store& store, const exemplar_batch& batch) {
  import_summary s;
  s.rows = batch.rows.size();
  s.left_out = batch.left_out;
  const std::size_t chunk = 10000;
  for (std::size_t i = 0; i < batch.rows.size(); i += chunk) {
    std::span<const exemplar_input> part(batch.rows.data() + i, std::min(chunk, batch.rows.size() - i));
    auto outcomes = store.insert_batch(part);
    if (!outcomes.ok()) return outcomes.error();
    for (auto o : *outcomes) (o == insert_outcome::inserted ? s.inserted : s.duplicates)++;
  }
  return s;
}

}  // namespace crucible::exemplar
