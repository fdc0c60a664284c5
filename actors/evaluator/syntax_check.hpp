// The candidate's Python syntax, checked before any worker imports PyTorch.
// A measuring worker spends most of its start importing torch (about 8 s of
// load_task on an H200, 1-2 s on a CPU), and a candidate that does not parse
// used to pay all of it before the worker read its first line; a bare
// interpreter (-I -S) that only compiles the source answers in tens of
// milliseconds. Called by evaluator::evaluate before the compile cache.
//
// Only a clean SyntaxError (IndentationError and TabError included) is a
// verdict. Anything else the check meets (a crash, its deadline, a
// ValueError for null bytes) leaves the candidate to the measuring worker,
// which judges it as before, so the check can shorten an evaluation but
// never change its status.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "actors/evaluator/sandbox.hpp"
#include "actors/evaluator/worker_session.hpp"
#include "runtime/base/result.hpp"

namespace crucible::evaluator {

// The SyntaxError's text ("File \"<crucible_candidate>\", line N ...
// SyntaxError: ..."), or nullopt when the source parses or the check could
// not judge it. The check runs in the sandbox with `limits` (every
// namespace the kernel allows; no GPU) in a scratch directory under
// scratch_root. Errors: io (no scratch directory, the process did not start).
result<std::optional<std::string>> syntax_error_of(const std::string& source, const worker_environment& env,
                                                   sandbox_limits limits, const std::filesystem::path& scratch_root);

}  // namespace crucible::evaluator
