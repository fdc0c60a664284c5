#include "actors/evaluator/device.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <thread>

#include <signal.h>

#include <fmt/format.h>

namespace crucible::evaluator {

result<device_spec> parse_device(std::string_view text) {
  device_spec d;
  if (text == "cpu") return d;
  if (text == "cuda") {
    d.cuda = true;
    return d;
  }
  if (text.starts_with("cuda:")) {
    auto digits = text.substr(5);
    auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), d.index);
    if (ec == std::errc() && p == digits.data() + digits.size() && d.index >= 0) {
      d.cuda = true;
      return d;
    }
  }
  return make_error(errc::invalid_argument, fmt::format("device '{}' is not cpu or cuda:N", text));
}

namespace {

// nvidia-smi's compute processes on the GPU other than `own`: one
// "PID, NAME" line each.
result<std::vector<std::string>> foreign_apps(const device_spec& device, const std::vector<int>& own) {
  const std::string cmd = fmt::format(
      "nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader -i {} 2>&1; echo rc=$?", device.index);
  std::string out;
  if (FILE* f = ::popen(cmd.c_str(), "r")) {
    std::array<char, 256> buf;
    while (std::size_t n = std::fread(buf.data(), 1, buf.size(), f)) out.append(buf.data(), n);
    ::pclose(f);
  }
  const auto rc = out.rfind("rc=");
  if (rc == std::string::npos || out.compare(rc, 4, "rc=0") != 0)
    return make_error(errc::unavailable, fmt::format("cannot query GPU {} with nvidia-smi: {}", device.index, out));
  std::vector<std::string> apps;
  std::istringstream lines(out.substr(0, rc));
  for (std::string line; std::getline(lines, line);)
    if (line.find_first_not_of(' ') != std::string::npos &&
        std::find(own.begin(), own.end(), std::atoi(line.c_str())) == own.end())
      apps.push_back(line);
  return apps;
}

// A listed process that no longer exists: an exited process (the worker of
// an evaluator just stopped) whose CUDA context the driver has not yet
// released.
bool exited(const std::string& app) {
  const int pid = std::atoi(app.c_str());
  return pid > 0 && ::kill(pid, 0) != 0 && errno == ESRCH;
}

}  // namespace

status check_device_free(const device_spec& device, const std::vector<int>& own) {
  if (!device.cuda) return status::success();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    auto apps = foreign_apps(device, own);
    if (!apps) return apps.error();
    if (apps->empty()) return status::success();
    const bool releasing = std::all_of(apps->begin(), apps->end(), exited);
    if (!releasing || std::chrono::steady_clock::now() >= deadline) {
      std::string list;
      for (const auto& a : *apps) list += a + "\n";
      return make_error(errc::unavailable,
                        fmt::format("GPU {} is busy with another compute process{}: {}", device.index,
                                    releasing ? " (exited 10 s ago or more, its context not released)" : "", list));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

}  // namespace crucible::evaluator
