// `crucible eval`: one evaluation from the command line.
//   crucible eval --task T.py --candidate C.py [--device cpu|cuda:N]
//                 [--protocol default|paper|quick] [--seed S] [--json]
// Prints the evaluation (one JSON object with --json; the fields of
// to_json in evaluate.hpp). Exit status 0 whenever the evaluation itself ran,
// whatever the candidate did; 2 when it could not run (unreadable files,
// bad device or protocol, Python missing). Called by the crucible binary's
// main (runtime/cli) while it builds its CLI::App, on the main thread.
#pragma once

#include <CLI/CLI.hpp>

namespace crucible::evaluator {

void add_eval_command(CLI::App& app);

}  // namespace crucible::evaluator
