// Readers that map config sections onto the runtime's options structs:
// [log] -> log_options, [hub] -> hub_options, [bus] and [worker] ->
// peer_options, [metrics] -> metrics_options, [dashboard] -> dashboard_options. Each leaves a field at its
// default when the key is absent and rejects keys it does not know
// (config_file.hpp).
#pragma once

#include "runtime/bus/peer_options.hpp"
#include "runtime/config/config_file.hpp"
#include "runtime/dashboard/server.hpp"
#include "runtime/hub/hub_options.hpp"
#include "runtime/log/log.hpp"
#include "runtime/metrics/endpoint.hpp"

namespace crucible::config {

status read(section s, logging::log_options& out);
status read(section s, hub::hub_options& out);
// [bus]: connect, name, heartbeat_ms, dead_after_ms, retry_ms. The hub
// address lands in connect.
status read(section s, bus::peer_options& out, std::string& connect);
// [worker]: kinds, slots.
status read_worker(section s, bus::peer_options& out);
// [metrics]: listen.
status read(section s, metrics::metrics_options& out);
// [dashboard]: listen.
status read(section s, dashboard::dashboard_options& out);

}  // namespace crucible::config
