// Process-wide logging: every line carries the time, level, role and node
// ("2026-11-29T14:30:01.123 info hub@gpu-3: registered ..."). Called once by
// each command in runtime/cli before anything logs; spdlog's default logger
// is thread-safe afterwards.
#pragma once

#include <string>

#include "runtime/base/result.hpp"

namespace crucible::logging {

struct log_options {
  // trace, debug, info, warn, error, critical or off. The environment
  // variable CRUCIBLE_LOG overrides it.
  std::string level = "info";
  // Also append to this file when set.
  std::string file;
};

// Errors: errc::invalid_argument for an unknown level, errc::io when the
// file cannot be opened.
status init(const std::string& role, const std::string& node, const log_options& options);

// This machine's host name.
std::string host_name();

}  // namespace crucible::logging
