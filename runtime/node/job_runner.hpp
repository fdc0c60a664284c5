// Runs a list of jobs through a hub from the calling thread and waits for
// every result: a client_session driven by a plain loop over a transport.
// Used by `crucible submit`, `crucible run` and the benchmarks; keeps at most
// in_flight jobs outstanding (back-pressure instead of an unbounded queue).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "runtime/bus/client_session.hpp"
#include "runtime/bus/transport.hpp"

namespace crucible::node {

struct job_spec {
  std::string id, kind;
  bus::bytes payload;
};

struct job_report {
  std::uint64_t submitted = 0, completed = 0, failed = 0, missing = 0;
  std::uint64_t duplicate_results = 0, resends = 0;
  double elapsed_s = 0, jobs_per_s = 0, p50_us = 0, p99_us = 0;
  std::vector<bus::client_session::job_result> results;  // when keep_results
};

struct job_run_options {
  std::size_t in_flight = 256;
  std::chrono::duration<double> timeout{60.0};
  bool keep_results = false;
  // Called for each result as it arrives (optional).
  std::function<void(const bus::client_session::job_result&)> on_result;
  // Polled each turn: stop early when it returns true (optional).
  std::function<bool()> cancelled;
};

job_report run_jobs(bus::transport& transport, bus::peer_options client, const std::vector<job_spec>& jobs,
                    const job_run_options& options);

}  // namespace crucible::node
