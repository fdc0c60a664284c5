// Feeds: a file for `crucible exemplars import` (actors/exemplar/
// exemplar_import.hpp), JSON Lines of either form: {"task", "code", "score"
// [, "id"]} (what the KernelBench and quick-start seeds are written as) or
// CUDA-L1's released rows {"level_id", "task_id", "custom_code",
// "score_default"}, through parse_exemplar_lines.
// Checks: no crash, uncaught exception or sanitizer report; every row it
// returns has an id, code, a finite score and a task the store accepts
// (validate_task), so that the import cannot hand the store a row it would
// refuse or mis-key.
#include <cmath>
#include <cstdlib>
#include <sstream>

#include "actors/exemplar/exemplar_import.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  auto rows = crucible::exemplar::parse_exemplar_lines(in, "fuzz.jsonl");
  if (!rows) return 0;
  for (const auto& e : *rows) {
    if (e.id.empty() || e.code.empty() || !std::isfinite(e.score)) std::abort();
    if (!crucible::exemplar::validate_task(e.task)) std::abort();
  }
  return 0;
}
