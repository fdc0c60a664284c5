// Options every process that joins a hub shares ([bus] in a config file).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "messages/codec.hpp"

namespace crucible::bus {

struct peer_options {
  std::string name;                          // unique on the bus; default: ROLE-HOST-PID
  std::string node;                          // host name, for logs; default: gethostname()
  msg::Role role = msg::Role::Worker;
  std::vector<std::string> job_kinds;        // workers: kinds of job served ("*": any)
  std::uint32_t slots = 1;                   // workers: jobs run at once
  bool required = false;                     // detectors: the referee waits for this one's verdict
  std::uint32_t deadline_ms = 0;             // detectors: how long the referee waits (0: the referee's default)
  std::chrono::milliseconds heartbeat{500};  // interval of our heartbeats
  std::chrono::milliseconds dead_after{3000};   // hub silent this long: register again
  std::chrono::milliseconds retry{1000};     // resend an unanswered submit or result after this
  std::chrono::milliseconds accepted_retry{5000};  // resend an accepted submit still without result
  std::string keys;                          // CURVE key folder (curve_keys.hpp); empty: plain
};

}  // namespace crucible::bus
