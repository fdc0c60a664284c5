// DIR/report.html of a loop run: one self-contained page (inline SVG, no
// scripts or downloads) with reward, speedup, success rate, staleness,
// exemplar buckets and verdicts over time, the learner's loss and KL, and
// the kernels found (each task's best, kernels_found.hpp).
// Written by `crucible run` at the end of the loop (and of a resumed one).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/base/result.hpp"
#include "runtime/cli/run_summary.hpp"

namespace crucible::cli {

// rows: every settled candidate (run_summary.hpp); metrics: the learner's
// metrics.jsonl lines; summary: the figures printed at the end.
// bucket_width: the exemplar store's score bucket width. Errors: io.
status write_report(const std::string& path, const std::vector<settled_row>& rows,
                    const std::vector<nlohmann::json>& metrics, const nlohmann::json& summary, double bucket_width);

}  // namespace crucible::cli
