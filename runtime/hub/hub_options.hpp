// Options of the hub role ([hub] in a config file; docs/configuration.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace crucible::hub {

struct hub_options {
  // Address the hub binds; peers connect to the same (events use PORT+1, PORT+2).
  std::string bind = "tcp://127.0.0.1:5555";
  // Heartbeat interval in both directions.
  std::chrono::milliseconds heartbeat{500};
  // A peer silent this long is dead: its jobs are re-queued.
  std::chrono::milliseconds dead_after{3000};
  // After a restart, how long recovered jobs wait for their old workers to
  // claim them before they are dispatched again.
  std::chrono::milliseconds recovery_grace{3000};
  // A dispatched job whose receipt the worker has not confirmed by then is
  // treated as lost and re-queued.
  std::chrono::milliseconds redispatch_after{3000};
  // Submissions beyond this many queued jobs are refused (Reject Overloaded).
  std::size_t max_queued_jobs = 1'000'000;
  // Largest message accepted on any endpoint.
  std::size_t max_message_bytes = 64u << 20;
  // Directory of the hub's ledger: RocksDB markers, job log in joblog/ (docs/bus.md).
  std::string ledger_dir = "hub-ledger";
  // fsync every ledger commit (survives power loss; slower). Off: survives a
  // kill -9 of the hub, which is what the write-ahead log in the kernel gives.
  bool ledger_sync = false;
  // How long acknowledgement markers are kept to recognise late duplicates.
  std::chrono::seconds retain_acked{3600};
};

}  // namespace crucible::hub
