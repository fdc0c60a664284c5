#include "runtime/node/hub_actor.hpp"

#include <spdlog/spdlog.h>

#include "runtime/hub/hub_core.hpp"
#include "runtime/node/hub_board.hpp"
#include "runtime/node/hub_metrics.hpp"

namespace crucible::node {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

class hub_actor final : public caf::blocking_actor {
 public:
  hub_actor(caf::actor_config& cfg, hub::hub_options options, std::shared_ptr<storage::kv_store> kv,
            std::shared_ptr<bus::transport> transport, metrics::registry_ptr metrics,
            std::shared_ptr<dashboard::board> board)
      : caf::blocking_actor(cfg),
        options_(std::move(options)),
        kv_(std::move(kv)),
        transport_(std::move(transport)),
        board_(std::move(board)) {
    if (metrics) metrics_ = std::make_unique<hub_metrics>(std::move(metrics));
  }

  void act() override {
    // The job log lives inside the ledger directory, beside RocksDB's files.
    auto log = storage::open_file_segments(options_.ledger_dir + "/joblog");
    if (!log) {
      spdlog::critical("hub cannot open its job log: {}", log.error().text());
      fail_state(caf::make_error(caf::sec::runtime_error, log.error().text()));
      return;
    }
    hub::job_ledger_options ledger_options;
    ledger_options.durability = options_.ledger_sync ? storage::durability::synced : storage::durability::buffered;
    hub::job_ledger ledger(*kv_, **log, ledger_options);
    auto session = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
    hub::hub_core core(options_, ledger, session);
    if (auto s = core.recover(clock_type::now()); !s.ok()) {
      spdlog::critical("hub cannot recover its ledger: {}", s.error().text());
      fail_state(caf::make_error(caf::sec::runtime_error, s.error().text()));
      return;
    }
    const auto tick = std::min<std::chrono::milliseconds>(options_.heartbeat / 2, 50ms);
    auto last_tick = clock_type::now(), last_report = last_tick, last_metrics = last_tick;
    auto last_board = last_tick - 1s;  // the dashboard's first copy at once
    std::vector<bus::frame> frames;
    bool running = true;
    while (running) {
      frames.clear();
      if (auto s = transport_->receive(frames, 1024, tick); !s.ok()) {
        spdlog::error("hub receive failed on {}: {}", transport_->describe(), s.error().message);
        std::this_thread::sleep_for(10ms);
      }
      auto now = clock_type::now();
      for (auto& f : frames) {
        if (board_) show_event(f, *board_, options_.max_message_bytes, now);
        core.on_frame(std::move(f), now);
      }
      if (now - last_tick >= tick) {
        last_tick = now;
        core.on_tick(now);
      }
      flush(core, now);
      if (metrics_ && now - last_metrics >= 1s) {
        last_metrics = now;
        metrics_->update(core);
      }
      if (board_ && now - last_board >= 1s) {
        last_board = now;
        show_hub(core, *board_, now);
      }
      if (now - last_report >= 10s) {
        last_report = now;
        spdlog::info("{}", core.describe(now));
      }
      // The mailbox: stats requests and the exit message, without blocking.
      for (bool more = true; more;) {
        receive([&](stats_atom) { return core.describe(clock_type::now()); },
                [&](caf::exit_msg& m) {
                  spdlog::info("hub stopping: {}", caf::to_string(m.reason));
                  running = false;
                },
                caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
      }
    }
  }

 private:
  // Ledger first, replies after: an acknowledgement is never ahead of the
  // disk. finish_batch() reports a failing ledger.
  void flush(hub::hub_core& core, clock_type::time_point now) {
    const bool writes = metrics_ && core.ledger_writes_staged();
    const auto started = clock_type::now();
    auto s = core.finish_batch(now);
    if (writes) metrics_->observe_commit(clock_type::now() - started);
    auto out = core.take_outbox();  // on a failed commit, what acknowledges nothing (hub_core.hpp)
    bus::transmit(*transport_, out);
  }

  hub::hub_options options_;
  std::shared_ptr<storage::kv_store> kv_;
  std::shared_ptr<bus::transport> transport_;
  std::unique_ptr<hub_metrics> metrics_;
  std::shared_ptr<dashboard::board> board_;
};

}  // namespace

caf::actor spawn_hub(caf::actor_system& sys, hub::hub_options options, std::shared_ptr<storage::kv_store> kv,
                     std::shared_ptr<bus::transport> transport, metrics::registry_ptr metrics,
                     std::shared_ptr<dashboard::board> board) {
  return sys.spawn<hub_actor>(std::move(options), std::move(kv), std::move(transport), std::move(metrics),
                              std::move(board));
}

}  // namespace crucible::node
