#include "runtime/node/worker_actor.hpp"

#include <charconv>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace crucible::node {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace {

class echo_handler final : public job_handler {
 public:
  void run(const bus::worker_session::job_request& job, done_fn done) override {
    if (job.kind == "echo" || job.kind == "null") return done(msg::JobStatus::Ok, job.payload, {});
    if (job.kind == "sleep") {
      std::string text(job.payload.begin(), job.payload.end());
      int ms = 0;
      auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), ms);
      if (ec != std::errc() || ms < 0)
        return done(msg::JobStatus::Failed, {}, "sleep job needs a number of ms, got '" + text + "'");
      std::thread([ms, payload = job.payload, done = std::move(done)] {
        std::this_thread::sleep_for(std::chrono::milliseconds(ms));
        done(msg::JobStatus::Ok, payload, {});
      }).detach();
      return;
    }
    done(msg::JobStatus::Failed, {}, "the echo worker does not serve jobs of kind '" + job.kind + "'");
  }
};

// Finished jobs, handed from any thread to the worker's thread.
struct completion_queue {
  struct completion {
    std::string id;
    msg::JobStatus status;
    bus::bytes payload;
    std::string error;
  };
  std::mutex mu;
  std::vector<completion> items;  // GUARDED_BY(mu)

  std::vector<completion> take() {
    std::lock_guard lock(mu);
    return std::exchange(items, {});
  }
};

class worker_actor final : public caf::blocking_actor {
 public:
  worker_actor(caf::actor_config& cfg, bus::peer_options options, std::shared_ptr<job_handler> handler,
               std::shared_ptr<bus::transport> transport, std::shared_ptr<event_outbox> events)
      : caf::blocking_actor(cfg),
        options_(std::move(options)),
        handler_(std::move(handler)),
        transport_(std::move(transport)),
        events_(std::move(events)),
        done_(std::make_shared<completion_queue>()) {}

  void act() override {
    bus::worker_session session(options_);
    const auto tick = std::min<std::chrono::milliseconds>(options_.heartbeat / 2, 50ms);
    session.start(clock_type::now());
    std::uint64_t completed = 0;
    std::vector<bus::frame> frames;
    bool running = true;
    while (running) {
      auto out = session.take_outbox();
      if (events_)
        for (auto& e : events_->take()) out.push_back(std::move(e));
      bus::transmit(*transport_, out);
      frames.clear();
      (void)transport_->receive(frames, 1024, tick);
      auto now = clock_type::now();
      for (auto& f : frames) session.on_frame(f, now);
      session.on_tick(now);
      // Jobs that finish at once (in run()) free their slot for the next one
      // in the same turn.
      for (bool progress = true; progress;) {
        start_jobs(session);
        auto finished = done_->take();
        progress = !finished.empty();
        for (auto& c : finished) {
          ++completed;
          spdlog::debug("job {} finished: {}", c.id, c.status == msg::JobStatus::Ok ? "ok" : c.error);
          session.complete(c.id, c.status, c.payload, c.error, now);
        }
      }
      for (bool more = true; more;) {
        receive(
            [&](stats_atom) {
              return fmt::format("worker {}: {} completed, {} running, {} unacknowledged, {} duplicates ignored",
                                 options_.name, completed, session.running(), session.unacknowledged(),
                                 session.duplicates_ignored());
            },
            [&](caf::exit_msg&) { running = false; }, caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
      }
    }
    auto out = session.take_outbox();
    bus::transmit(*transport_, out);
  }

 private:
  void start_jobs(bus::worker_session& session) {
    for (auto& job : session.take_jobs()) {
      spdlog::debug("job {} started (kind {}, attempt {})", job.id, job.kind, job.attempt);
      handler_->run(job, [q = done_, t = transport_, id = job.id](msg::JobStatus status, bus::bytes payload,
                                                                  std::string error) {
        {
          std::lock_guard lock(q->mu);
          q->items.push_back({id, status, std::move(payload), std::move(error)});
        }
        t->wake();
      });
    }
  }

  bus::peer_options options_;
  std::shared_ptr<job_handler> handler_;
  std::shared_ptr<bus::transport> transport_;
  std::shared_ptr<event_outbox> events_;
  std::shared_ptr<completion_queue> done_;
};

}  // namespace

void event_outbox::publish(std::string topic, bus::bytes data) {
  std::lock_guard lock(mu_);
  if (capacity_ == 0) {
    ++dropped_;
    return;
  }
  if (waiting_.size() >= capacity_) {
    waiting_.erase(waiting_.begin());
    ++dropped_;
  }
  waiting_.push_back({bus::channel::event, std::move(topic), std::move(data)});
}

bus::outbox event_outbox::take() {
  std::lock_guard lock(mu_);
  return std::exchange(waiting_, {});
}

std::uint64_t event_outbox::dropped() const {
  std::lock_guard lock(mu_);
  return dropped_;
}

std::unique_ptr<job_handler> make_echo_handler() { return std::make_unique<echo_handler>(); }

caf::actor spawn_worker(caf::actor_system& sys, bus::peer_options options, std::shared_ptr<job_handler> handler,
                        std::shared_ptr<bus::transport> transport, std::shared_ptr<event_outbox> events) {
  return sys.spawn<worker_actor>(std::move(options), std::move(handler), std::move(transport), std::move(events));
}

}  // namespace crucible::node
