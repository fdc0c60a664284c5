// One measurement per distinct kernel ([referee] reuse_identical, default
// on): a candidate whose code is byte for byte that of an earlier candidate
// of the same task takes that candidate's Measurement instead of a measure
// job of its own. A policy that has found a kernel writes it again and
// again (the CPU quick-start: 240 candidates, 59 distinct codes; 136
// successes, 23 distinct), and each copy cost a full evaluation, whose noise
// then gave identical completions different rewards (gelu_tanh's one
// kernel settled anywhere from 1.17 to 1.26), an advantage GRPO learns from
// as if it were real.
//
// What it allows: the earlier candidate's Ok, Incorrect, CompileError and
// Hack measurements, which the same bytes on the same task would earn
// again. What it does not: Void, Timeout, Crashed and RuntimeError, which
// a busy machine, a lost worker or a full device can cause as well as the
// code, are measured afresh (and that candidate serves the copies after
// it); verification (layer 7) and the detectors still run for each
// candidate; a candidate of another task, or whose code differs by one
// byte, is its own. The settlement's reason names the candidate whose
// measurement it took.
//
// Who calls it: referee_core (on_settle, advance).
#pragma once

#include <string>
#include <string_view>

#include "messages/domain_generated.h"

namespace crucible::referee {

// Whether a measurement of this status serves a later identical candidate.
bool reusable(msg::EvalStatus status);

// The ledger key of a task's code: "m/<task id>/<FNV-1a 64 of the code, 16
// hex digits>" (candidate_ledger; a hash collision is caught by comparing
// the code itself before any reuse).
std::string code_key(std::string_view task_id, std::string_view code);

}  // namespace crucible::referee
