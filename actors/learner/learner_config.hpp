// Maps the [learner] section of a TOML config onto learner_options
// (learner_options.hpp; every key and default in docs/configuration.md).
// Called by `crucible learner` on the main thread before anything starts.
#pragma once

#include "actors/learner/learner_options.hpp"
#include "runtime/base/result.hpp"
#include "runtime/config/config_file.hpp"

namespace crucible::config {

// Reads every key of `s` it knows into `out`; keys absent keep their value.
// invalid_argument naming the section and key for an unknown key, a wrong
// type, an unknown objective or aggregation, or a value out of range.
status read(section s, learner::learner_options& out);

}  // namespace crucible::config

namespace crucible::learner {

// Checks the combination of values (ranges, batch splits); the config reader
// and the trainer's constructor call it. invalid_argument naming the key.
status validate(const learner_options& options);

}  // namespace crucible::learner
