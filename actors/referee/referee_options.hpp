// Options of the referee ([referee] in a config file; docs/configuration.md
// lists each key with its default). Read by `crucible hub` (the referee runs
// inside the hub process when enabled) and `crucible referee`.
#pragma once

#include <chrono>
#include <string>

#include "runtime/base/result.hpp"
#include "runtime/config/config_file.hpp"

namespace crucible::referee {

// What a candidate settles as when verification cannot happen (no second
// evaluator of the same device model in time, or the verify job misses its
// deadline): kept with verified = false, or void (reward 0).
enum class unverified_policy { keep_unverified, void_it };

// What a required detector that gave no verdict by its deadline means.
enum class missing_verdict_policy { void_it, ignore };

struct referee_options {
  // Run the referee inside `crucible hub`. Default: true.
  bool enabled = true;
  // Layer 7 triggers: a measured speedup above verify_above (default 3.0), or
  // above verify_above_best times the task's best verified speedup so far
  // (default 2.0), is measured again on another evaluator.
  double verify_above = 3.0;
  double verify_above_best = 2.0;
  // The two measurements agree when |b - a| <= agree_within * a (default 0.10).
  double agree_within = 0.10;
  // How long to wait for a second evaluator of the same device model to
  // appear (default 60000 ms), and for a submitted verify job's result
  // (default 900000 ms), before applying `unverified`.
  std::chrono::milliseconds second_device_wait{60000};
  std::chrono::milliseconds verify_deadline{900000};
  // "unverified" (default: the measurement stands, verified = false, and the
  // reason says why) or "void".
  unverified_policy unverified = unverified_policy::keep_unverified;
  // A detector's deadline when its registration gives none (default 30000 ms).
  std::chrono::milliseconds detector_deadline{30000};
  // "void" (default) or "ignore": a required detector silent past its deadline.
  missing_verdict_policy required_missing = missing_verdict_policy::void_it;
  // A required detector or an exemplar store that leaves the bus (declared
  // dead, restarted, stopped) is still counted on within this long of its
  // leaving (default 120000 ms; 0: forgotten at once): a candidate judged
  // then is asked the detector, a clean success settled then is inserted;
  // the hub queues those jobs until the peer is back, and a detector's
  // deadline with required_missing decides if it is not (remembered_peers.hpp).
  std::chrono::milliseconds peer_grace{120000};
  // Clean successes are inserted into the exemplar store (exemplar.insert
  // jobs) when an exemplar service is registered. Default: true.
  bool insert_exemplars = true;
  // A candidate whose code is byte for byte an earlier candidate's of the
  // same task takes that candidate's measurement instead of being measured
  // again (measurement_reuse.hpp says which measurements). Default: true.
  bool reuse_identical = true;
  // Fault injection, for tests and demonstrations only: the verify job's
  // measured speedup is multiplied by this before the comparison (default
  // 1.0: off). Any other value says so in every verified settlement's reason.
  double inject_verify_scale = 1.0;
  // `crucible referee` only: directory of its own RocksDB ledger. Inside the
  // hub the referee shares the hub's database (family "candidates").
  std::string ledger_dir = "referee-ledger";
};

// [referee]. Errors: unknown keys, wrong types, values out of range.
status read(config::section s, referee_options& out);

// "verify above 3.00x or 2.00x the task's best, agree within 10%, ..." for logs.
std::string describe(const referee_options& o);

}  // namespace crucible::referee
