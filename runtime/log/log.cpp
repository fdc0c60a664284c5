#include "runtime/log/log.hpp"

#include <unistd.h>

#include <cstdlib>

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

namespace crucible::logging {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

status init(const std::string& role, const std::string& node, const log_options& options) {
  std::string level_name = options.level;
  if (const char* env = std::getenv("CRUCIBLE_LOG"); env && *env) level_name = env;
  auto level = spdlog::level::from_str(level_name);
  if (level == spdlog::level::off && level_name != "off")
    return make_error(errc::invalid_argument, "log level '" + level_name +
                                                  "' is not one of trace, debug, info, warn, error, critical, off");
  std::vector<spdlog::sink_ptr> sinks{std::make_shared<spdlog::sinks::stderr_color_sink_mt>()};
  if (!options.file.empty()) {
    try {
      sinks.push_back(std::make_shared<spdlog::sinks::basic_file_sink_mt>(options.file));
    } catch (const spdlog::spdlog_ex& e) {
      return make_error(errc::io, "cannot open log file '" + options.file + "': " + e.what());
    }
  }
  auto logger = std::make_shared<spdlog::logger>(role, sinks.begin(), sinks.end());
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ " + role + "@" + node + ": %v");
  logger->set_level(level);
  logger->flush_on(spdlog::level::warn);
  spdlog::set_default_logger(logger);
  return {};
}

}  // namespace crucible::logging
