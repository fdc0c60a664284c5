// A rollout's durable progress, its [rollout] state_file: the first group
// the learner does not have yet, and, for each group from there on that the
// learner refused as too stale, how many times it was sampled again. A
// restarted rollout resumes at `next` and names each group's learner job as
// the incarnation before it did (learner_job_id), so that the hub answers a
// job once and the learner trains each group once, and a refused group is
// sampled again instead of being lost (a lost group left the chaos test's
// last batch one group short for ever).
//
// Who calls it: the rollout actor, reading at its start and writing after
// every learner answer (before acknowledging it); the chaos test reads the
// first number. Torch-free; any thread.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "runtime/base/result.hpp"

namespace crucible::rollout {

struct rollout_progress {
  std::uint64_t next = 0;                            // the first group the learner does not have
  std::map<std::uint64_t, std::uint32_t> resamples;  // group number -> times sampled again after a refusal
};

// The file: "NEXT\n", then a line "resample NUMBER TIMES" per refused group
// at or after NEXT (the file of a rollout never refused is the number alone,
// as before). A missing or empty file is a fresh start ({}); a file that is
// not of this form is invalid_argument naming the file and the line.
result<rollout_progress> read_progress(const std::string& file);
// Writes a new file and renames it over the old (a crash leaves one or the
// other whole); drops resamples of groups before `next`. Unavailable naming
// the file when it cannot.
status write_progress(const std::string& file, const rollout_progress& progress);

// The learner job of group `number` of rollout `name`: "group/NAME/gN" when
// first sent, "group/NAME/gN/rK" when sampled again for the K-th time.
std::string learner_job_id(const std::string& name, std::uint64_t number, std::uint32_t resamples);

}  // namespace crucible::rollout
