#include "runtime/node/hub_actor.hpp"

#include <spdlog/spdlog.h>

#include "runtime/hub/hub_core.hpp"

namespace crucible::node {

using namespace std::chrono_literals;

namespace {

struct hub_state {
  std::shared_ptr<storage::kv_store> kv;
  std::unique_ptr<hub::job_ledger> ledger;
  std::unique_ptr<hub::hub_core> core;
  bus_loop* loop = nullptr;
  std::chrono::steady_clock::time_point last_report{};
  static inline const char* name = "hub";

  // Ledger first, replies after: an acknowledgement is never ahead of the disk.
  void flush() {
    auto s = core->finish_batch(std::chrono::steady_clock::now());
    auto out = core->take_outbox();
    if (!s.ok()) {
      spdlog::error("job ledger commit failed ({}); {} replies withheld, peers will retry", s.error().text(),
                    out.size());
      return;
    }
    loop->post(std::move(out));
  }
};

hub_actor::behavior_type hub_impl(hub_actor::stateful_pointer<hub_state> self, hub::hub_options options,
                                  std::shared_ptr<storage::kv_store> kv, bus_loop* loop) {
  auto& st = self->state;
  st.kv = std::move(kv);
  st.loop = loop;
  st.ledger = std::make_unique<hub::job_ledger>(
      *st.kv, options.ledger_sync ? storage::durability::synced : storage::durability::buffered);
  auto session = static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  auto tick = std::min<std::chrono::milliseconds>(options.heartbeat / 2, 50ms);
  st.core = std::make_unique<hub::hub_core>(options, *st.ledger, session);
  if (auto s = st.core->recover(std::chrono::steady_clock::now()); !s.ok()) {
    spdlog::critical("hub cannot recover its ledger: {}", s.error().text());
    self->quit(caf::make_error(caf::sec::runtime_error, s.error().text()));
  } else {
    self->delayed_send(self, tick, tick_atom::value);
  }
  return {
      [=](frames_atom, std::vector<bus::frame>& frames) {
        auto now = std::chrono::steady_clock::now();
        for (auto& f : frames) self->state.core->on_frame(f, now);
        self->state.flush();
      },
      [=](tick_atom) {
        auto now = std::chrono::steady_clock::now();
        auto& s = self->state;
        s.core->on_tick(now);
        s.flush();
        if (now - s.last_report >= 10s) {
          s.last_report = now;
          spdlog::info("{}", s.core->describe());
        }
        self->delayed_send(self, tick, tick_atom::value);
      },
      [=](stats_atom) -> std::string { return self->state.core->describe(); },
  };
}

}  // namespace

hub_actor spawn_hub(caf::actor_system& sys, hub::hub_options options, std::shared_ptr<storage::kv_store> kv,
                    bus_loop& loop) {
  return sys.spawn<caf::detached>(hub_impl, std::move(options), std::move(kv), &loop);
}

}  // namespace crucible::node
