#include "runtime/config/runtime_options.hpp"

namespace crucible::config {

status read(section s, logging::log_options& out) {
  CRUCIBLE_TRY(s.read("level", out.level));
  CRUCIBLE_TRY(s.read("file", out.file));
  return s.finish();
}

status read(section s, hub::hub_options& out) {
  CRUCIBLE_TRY(s.read("bind", out.bind));
  CRUCIBLE_TRY(s.read("heartbeat_ms", out.heartbeat));
  CRUCIBLE_TRY(s.read("dead_after_ms", out.dead_after));
  CRUCIBLE_TRY(s.read("recovery_grace_ms", out.recovery_grace));
  CRUCIBLE_TRY(s.read("redispatch_after_ms", out.redispatch_after));
  CRUCIBLE_TRY(s.read("max_queued_jobs", out.max_queued_jobs));
  CRUCIBLE_TRY(s.read("max_message_bytes", out.max_message_bytes));
  CRUCIBLE_TRY(s.read("ledger_dir", out.ledger_dir));
  CRUCIBLE_TRY(s.read("ledger_sync", out.ledger_sync));
  CRUCIBLE_TRY(s.read("retain_acked_s", out.retain_acked));
  if (out.heartbeat.count() == 0 || out.dead_after <= out.heartbeat)
    return make_error(errc::invalid_argument, s.name() == "hub"
                                                  ? "[hub] dead_after_ms must be larger than heartbeat_ms (> 0)"
                                                  : "dead_after_ms must be larger than heartbeat_ms");
  return s.finish();
}

status read(section s, bus::peer_options& out, std::string& connect) {
  CRUCIBLE_TRY(s.read("connect", connect));
  CRUCIBLE_TRY(s.read("name", out.name));
  CRUCIBLE_TRY(s.read("heartbeat_ms", out.heartbeat));
  CRUCIBLE_TRY(s.read("dead_after_ms", out.dead_after));
  CRUCIBLE_TRY(s.read("retry_ms", out.retry));
  CRUCIBLE_TRY(s.read("accepted_retry_ms", out.accepted_retry));
  CRUCIBLE_TRY(s.read("keys", out.keys));
  if (out.heartbeat.count() == 0 || out.dead_after <= out.heartbeat)
    return make_error(errc::invalid_argument, "[bus] dead_after_ms must be larger than heartbeat_ms (> 0)");
  return s.finish();
}

status read_worker(section s, bus::peer_options& out) {
  CRUCIBLE_TRY(s.read("kinds", out.job_kinds));
  CRUCIBLE_TRY(s.read("slots", out.slots));
  if (out.slots == 0) return make_error(errc::invalid_argument, "[worker] slots must be at least 1");
  return s.finish();
}

status read(section s, metrics::metrics_options& out) {
  CRUCIBLE_TRY(s.read("listen", out.listen));
  return s.finish();
}

status read(section s, dashboard::dashboard_options& out) {
  CRUCIBLE_TRY(s.read("listen", out.listen));
  return s.finish();
}

}  // namespace crucible::config
