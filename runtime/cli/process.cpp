#include "runtime/cli/process.hpp"

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <thread>
#include <cstdio>

#include <spdlog/spdlog.h>

#include "runtime/config/runtime_options.hpp"
#include "runtime/log/log.hpp"

namespace crucible::cli {

namespace {
std::atomic<bool> stop_requested{false};
extern "C" void on_signal(int) { stop_requested = true; }
}  // namespace

const std::vector<std::string>& known_sections() {
  static const std::vector<std::string> sections{"log", "hub", "bus", "worker", "run", "referee", "detector", "rollout", "learner", "sft", "metrics", "dashboard"};
  return sections;
}

std::optional<config::file> load_config(const std::string& path) {
  const auto& known = known_sections();
  auto f = path.empty() ? result<config::file>(config::file::empty()) : config::file::load(path);
  if (!f) {
    fail(f.error());
    return std::nullopt;
  }
  if (auto s = f->check_sections(known); !s) {
    fail(s.error());
    return std::nullopt;
  }
  return std::move(*f);
}

namespace {

// The address to listen on, the command's flag before the section's listen
// key, and where it came from for errors ("--NAME", "PATH: [NAME] listen").
template <class Options>
result<std::pair<std::string, std::string>> listen_address(const config::file& file, const std::string& name,
                                                           const std::string& flag) {
  Options options;
  CRUCIBLE_TRY(config::read(file.get(name), options));
  if (!flag.empty()) return std::pair{flag, "--" + name};
  return std::pair{options.listen, file.path() + ": [" + name + "] listen"};
}

}  // namespace

result<std::unique_ptr<metrics::endpoint>> open_metrics(const config::file& file, const std::string& flag) {
  auto address = listen_address<metrics::metrics_options>(file, "metrics", flag);
  if (!address) return address.error();
  if (address->first.empty()) return std::unique_ptr<metrics::endpoint>();
  auto e = metrics::endpoint::listen(address->first, address->second);
  if (!e) return e.error();
  spdlog::info("metrics at {}", (*e)->url());
  return e;
}

void add_metrics_option(CLI::App& cmd, std::string& flag) {
  cmd.add_option("--metrics", flag, "serve Prometheus metrics at http://HOST:PORT/metrics ([metrics] listen; "
                                    "docs/metrics.md); none: off")
      ->envname("CRUCIBLE_METRICS");
}

result<std::unique_ptr<dashboard::server>> open_dashboard(const config::file& file, const std::string& flag) {
  auto address = listen_address<dashboard::dashboard_options>(file, "dashboard", flag);
  if (!address) return address.error();
  if (address->first.empty()) return std::unique_ptr<dashboard::server>();
  auto d = dashboard::server::listen(address->first, address->second);
  if (!d) return d.error();
  spdlog::info("dashboard at {}", (*d)->url());
  std::printf("dashboard at %s\n", (*d)->url().c_str());
  std::fflush(stdout);
  return d;
}

void add_dashboard_option(CLI::App& cmd, std::string& flag) {
  cmd.add_option("--dashboard", flag, "serve the live dashboard at http://HOST:PORT/ ([dashboard] listen; "
                                      "docs/dashboard.md); none: off")
      ->envname("CRUCIBLE_DASHBOARD");
}

int fail(const error& e) { return fail(e.message); }

int fail(const std::string& message) {
  std::fprintf(stderr, "crucible: %s\n", message.c_str());
  return 2;
}

std::string default_name(const std::string& role) {
  return role + "-" + logging::host_name() + "-" + std::to_string(::getpid());
}

void install_signal_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::signal(SIGPIPE, SIG_IGN);
}

bool shutdown_requested() { return stop_requested; }

int wait_for_shutdown(caf::actor_system& sys, const std::vector<caf::actor>& actors) {
  caf::scoped_actor self{sys};
  for (auto& a : actors) self->monitor(a);
  int code = -1;
  while (code < 0) {
    self->receive(
        [&](caf::down_msg& d) {
          spdlog::critical("an actor stopped: {}; the process exits", caf::to_string(d.reason));
          code = 1;
        },
        caf::after(std::chrono::milliseconds(100)) >> [&] {
          if (stop_requested) {
            spdlog::info("shutting down on signal");
            code = 0;
          }
        });
  }
  for (auto& a : actors) self->send_exit(a, caf::exit_reason::user_shutdown);
  // The actor system's destructor waits for every actor: one that does not
  // stop (a bug) must not leave the process hanging after a signal.
  std::thread([code] {
    std::this_thread::sleep_for(std::chrono::seconds(15));
    spdlog::critical("actors still running 15 s after shutdown began; exiting anyway");
    spdlog::default_logger()->flush();
    std::_Exit(code == 0 ? 1 : code);
  }).detach();
  return code;
}

}  // namespace crucible::cli
