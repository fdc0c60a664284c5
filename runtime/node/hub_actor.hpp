// The hub role as a CAF actor that is also its process's I/O thread for the
// hub's endpoints: it owns the transport (through the transport interface,
// never a ZeroMQ header), the protocol core (hub_core) and the ledger. Frames
// go from the sockets to the core and replies back on one thread, with no
// hand-off: the hub is the hot path of every job, and each hand-off between
// threads costs a wake-up (docs/benchmarks.md shows the difference).
//
// Messages it takes in its mailbox: stats_atom -> std::string (a one-line
// summary); an exit message stops it. Spawned by `crucible hub` and
// `crucible run`; when recovery from the ledger fails it stops with that
// error, and the process reports it and exits.
#pragma once

#include <memory>

#include <caf/all.hpp>

#include "runtime/bus/transport.hpp"
#include "runtime/dashboard/board.hpp"
#include "runtime/hub/hub_options.hpp"
#include "runtime/metrics/registry.hpp"
#include "runtime/node/caf_types.hpp"
#include "storage/kv_store.hpp"

namespace crucible::node {

// metrics: where its families go (hub_metrics.hpp); null: none.
// board: the dashboard it shows its fleet, queues and settlements on
// (hub_board.hpp); null: none.
caf::actor spawn_hub(caf::actor_system& sys, hub::hub_options options, std::shared_ptr<storage::kv_store> kv,
                     std::shared_ptr<bus::transport> transport, metrics::registry_ptr metrics = nullptr,
                     std::shared_ptr<dashboard::board> board = nullptr);

}  // namespace crucible::node
