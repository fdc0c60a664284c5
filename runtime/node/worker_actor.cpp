#include "runtime/node/worker_actor.hpp"

#include <charconv>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace crucible::node {

using namespace std::chrono_literals;

namespace {

class echo_handler final : public job_handler {
 public:
  void run(const bus::worker_session::job_request& job, done_fn done) override {
    if (job.kind == "echo" || job.kind == "null") return done(msg::JobStatus::Ok, job.payload, {});
    if (job.kind == "sleep") {
      std::string text(job.payload.begin(), job.payload.end());
      int ms = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
      if (ec != std::errc() || ms < 0) return done(msg::JobStatus::Failed, {}, "sleep job needs a number of ms, got '" + text + "'");
      std::thread([ms, payload = job.payload, done = std::move(done)] {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        done(msg::JobStatus::Ok, payload, {});
      }).detach();
      return;
    }
    done(msg::JobStatus::Failed, {}, "the echo worker does not serve jobs of kind '" + job.kind + "'");
  }
};

struct worker_state {
  std::unique_ptr<bus::worker_session> session;
  std::shared_ptr<job_handler> handler;
  bus_loop* loop = nullptr;
  std::uint64_t completed = 0;
  static inline const char* name = "worker";

  void start_jobs(worker_actor::pointer self) {
    for (auto& job : session->take_jobs()) {
      spdlog::debug("job {} started (kind {}, attempt {})", job.id, job.kind, job.attempt);
      worker_actor handle = caf::actor_cast<worker_actor>(self);
      handler->run(job, [handle, id = job.id](msg::JobStatus status, bus::bytes payload, std::string error) {
        caf::anon_send(handle, done_atom::value, id, static_cast<int>(status), std::move(payload), std::move(error));
      });
    }
    loop->post(session->take_outbox());
  }
};

worker_actor::behavior_type worker_impl(worker_actor::stateful_pointer<worker_state> self, bus::peer_options options,
                                        std::shared_ptr<job_handler> handler, bus_loop* loop) {
  auto& st = self->state;
  st.handler = std::move(handler);
  st.loop = loop;
  auto tick = std::min<std::chrono::milliseconds>(options.heartbeat / 2, 50ms);
  st.session = std::make_unique<bus::worker_session>(std::move(options));
  st.session->start(std::chrono::steady_clock::now());
  loop->post(st.session->take_outbox());
  self->delayed_send(self, tick, tick_atom::value);
  return {
      [=](frames_atom, std::vector<bus::frame>& frames) {
        auto now = std::chrono::steady_clock::now();
        for (auto& f : frames) self->state.session->on_frame(f, now);
        self->state.start_jobs(self);
      },
      [=](tick_atom) {
        self->state.session->on_tick(std::chrono::steady_clock::now());
        self->state.start_jobs(self);
        self->delayed_send(self, tick, tick_atom::value);
      },
      [=](done_atom, std::string& id, int status, bus::bytes& payload, std::string& error) {
        auto& s = self->state;
        ++s.completed;
        spdlog::debug("job {} finished: {}", id, status == 0 ? "ok" : error);
        s.session->complete(id, static_cast<msg::JobStatus>(status), payload, error, std::chrono::steady_clock::now());
        s.start_jobs(self);
      },
      [=](stats_atom) -> std::string {
        auto& s = self->state;
        return fmt::format("worker {}: {} completed, {} running, {} unacknowledged, {} duplicates ignored",
                           s.session->options().name, s.completed, s.session->running(), s.session->unacknowledged(),
                           s.session->duplicates_ignored());
      },
  };
}

}  // namespace

std::unique_ptr<job_handler> make_echo_handler() { return std::make_unique<echo_handler>(); }

worker_actor spawn_worker(caf::actor_system& sys, bus::peer_options options, std::shared_ptr<job_handler> handler,
                          bus_loop& loop) {
  return sys.spawn<caf::detached>(worker_impl, std::move(options), std::move(handler), &loop);
}

}  // namespace crucible::node
