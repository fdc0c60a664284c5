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
  static const std::vector<std::string> sections{"log", "hub", "bus", "worker", "run", "referee", "detector", "rollout", "learner", "sft", "metrics"};
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

result<std::unique_ptr<metrics::endpoint>> open_metrics(const config::file& file, const std::string& flag) {
  metrics::metrics_options options;
  CRUCIBLE_TRY(config::read(file.get("metrics"), options));
  const bool from_flag = !flag.empty();
  const std::string address = from_flag ? flag : options.listen;
  if (address.empty()) return std::unique_ptr<metrics::endpoint>();
  auto e = metrics::endpoint::listen(address, from_flag ? "--metrics" : file.path() + ": [metrics] listen");
  if (!e) return e.error();
  spdlog::info("metrics at {}", (*e)->url());
  return e;
}

void add_metrics_option(CLI::App& cmd, std::string& flag) {
  cmd.add_option("--metrics", flag, "serve Prometheus metrics at http://HOST:PORT/metrics ([metrics] listen; "
                                    "docs/metrics.md); none: off")
      ->envname("CRUCIBLE_METRICS");
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
