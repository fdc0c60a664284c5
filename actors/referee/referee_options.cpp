#include "actors/referee/referee_options.hpp"

#include <fmt/format.h>

namespace crucible::referee {

status read(config::section s, referee_options& o) {
  std::string unverified = o.unverified == unverified_policy::void_it ? "void" : "unverified";
  std::string missing = o.required_missing == missing_verdict_policy::void_it ? "void" : "ignore";
  CRUCIBLE_TRY(s.read("enabled", o.enabled));
  CRUCIBLE_TRY(s.read("verify_above", o.verify_above));
  CRUCIBLE_TRY(s.read("verify_above_best", o.verify_above_best));
  CRUCIBLE_TRY(s.read("agree_within", o.agree_within));
  CRUCIBLE_TRY(s.read("second_device_wait_ms", o.second_device_wait));
  CRUCIBLE_TRY(s.read("verify_deadline_ms", o.verify_deadline));
  CRUCIBLE_TRY(s.read("unverified", unverified));
  CRUCIBLE_TRY(s.read("detector_deadline_ms", o.detector_deadline));
  CRUCIBLE_TRY(s.read("required_missing", missing));
  CRUCIBLE_TRY(s.read("peer_grace_ms", o.peer_grace));
  CRUCIBLE_TRY(s.read("insert_exemplars", o.insert_exemplars));
  CRUCIBLE_TRY(s.read("reuse_identical", o.reuse_identical));
  CRUCIBLE_TRY(s.read("inject_verify_scale", o.inject_verify_scale));
  CRUCIBLE_TRY(s.read("ledger_dir", o.ledger_dir));
  if (unverified != "unverified" && unverified != "void")
    return make_error(errc::invalid_argument, "[referee] unverified must be \"unverified\" or \"void\", got \"" +
                                                  unverified + "\"");
  if (missing != "void" && missing != "ignore")
    return make_error(errc::invalid_argument,
                      "[referee] required_missing must be \"void\" or \"ignore\", got \"" + missing + "\"");
  if (o.verify_above <= 0 || o.verify_above_best <= 0)
    return make_error(errc::invalid_argument, "[referee] verify_above and verify_above_best must be positive");
  if (o.inject_verify_scale <= 0)
    return make_error(errc::invalid_argument, "[referee] inject_verify_scale must be positive");
  if (o.agree_within < 0 || o.agree_within >= 1)
    return make_error(errc::invalid_argument, "[referee] agree_within must be in [0, 1)");
  o.unverified = unverified == "void" ? unverified_policy::void_it : unverified_policy::keep_unverified;
  o.required_missing = missing == "void" ? missing_verdict_policy::void_it : missing_verdict_policy::ignore;
  return s.finish();
}

std::string describe(const referee_options& o) {
  return fmt::format("verify above {:.2f}x or {:.2f}x the task's best verified, agree within {:.0f}%, second device "
                     "wait {} ms ({} after), detector deadline {} ms (silent required: {}), exemplar inserts {}, a "
                     "required detector or exemplar store that left counted on for {} ms, identical code {}",
                     o.verify_above, o.verify_above_best, o.agree_within * 100, o.second_device_wait.count(),
                     o.unverified == unverified_policy::void_it ? "void" : "unverified", o.detector_deadline.count(),
                     o.required_missing == missing_verdict_policy::void_it ? "void" : "ignore",
                     o.insert_exemplars ? "on" : "off", o.peer_grace.count(),
                     o.reuse_identical ? "measured once" : "measured each time") +
         (o.inject_verify_scale != 1.0
              ? fmt::format("; FAULT INJECTION: verify measurements scaled by {:.2f}", o.inject_verify_scale)
              : std::string());
}

}  // namespace crucible::referee
