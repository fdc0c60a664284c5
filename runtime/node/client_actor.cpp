#include "runtime/node/client_actor.hpp"

#include <map>
#include <mutex>

#include <spdlog/spdlog.h>

#include "runtime/node/caf_types.hpp"

namespace crucible::node {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

namespace detail {
// Requests handed from any thread to the client actor's thread.
struct client_inbox {
  struct submission {
    std::string id, kind, exclude;
    bus::bytes payload;
    result_callback on_result;
  };
  struct event {
    std::string topic;
    bus::bytes data;
  };
  std::mutex mu;
  std::vector<submission> submissions;  // GUARDED_BY(mu)
  std::vector<event> events;            // GUARDED_BY(mu)
  std::vector<std::string> acks;        // GUARDED_BY(mu)
  std::shared_ptr<bus::transport> transport;

  template <class F>
  void push(F&& f) {
    {
      std::lock_guard lock(mu);
      f();
    }
    transport->wake();
  }
};
}  // namespace detail

void hub_client::submit(std::string id, std::string kind, bus::bytes payload, result_callback on_result,
                        std::string exclude_worker) const {
  inbox_->push([&] {
    inbox_->submissions.push_back(
        {std::move(id), std::move(kind), std::move(exclude_worker), std::move(payload), std::move(on_result)});
  });
}

void hub_client::publish(std::string topic, bus::bytes data) const {
  inbox_->push([&] { inbox_->events.push_back({std::move(topic), std::move(data)}); });
}

void hub_client::acknowledge(std::string id) const {
  inbox_->push([&] { inbox_->acks.push_back(std::move(id)); });
}

namespace {

class client_actor final : public caf::blocking_actor {
 public:
  client_actor(caf::actor_config& cfg, client_actor_options options, std::shared_ptr<detail::client_inbox> inbox)
      : caf::blocking_actor(cfg), options_(std::move(options)), inbox_(std::move(inbox)) {}

  void act() override {
    auto& transport = *inbox_->transport;
    for (auto& topic : options_.subscribe)
      if (auto s = transport.subscribe(topic); !s.ok())
        spdlog::error("{}: cannot subscribe to '{}': {}", options_.peer.name, topic, s.error().message);
    bus::client_session session(options_.peer, options_.manual_acks);
    const auto tick = std::min<std::chrono::milliseconds>(options_.peer.heartbeat / 2, 50ms);
    session.start(clock_type::now());
    std::vector<bus::frame> frames;
    std::vector<detail::client_inbox::submission> waiting;  // until registered
    bool running = true;
    while (running) {
      auto out = session.take_outbox();
      bus::transmit(transport, out);
      frames.clear();
      (void)transport.receive(frames, 1024, tick);
      auto now = clock_type::now();
      for (auto& f : frames) {
        if (f.via == bus::channel::event) {
          if (options_.on_event) options_.on_event(f.topic, f.data);
        } else {
          session.on_frame(f, now);
        }
      }
      session.on_tick(now);
      take_requests(session, transport, waiting, now);
      for (auto& r : session.take_results()) {
        auto it = callbacks_.find(r.id);
        result_callback callback;
        if (it != callbacks_.end()) {
          callback = std::move(it->second);
          callbacks_.erase(it);
        } else {
          callback = options_.on_other_result;
        }
        if (callback)
          callback(r);
        else if (options_.manual_acks)
          session.acknowledge(r.id);
      }
      for (bool more = true; more;) {
        receive(
            [&](stats_atom) {
              return fmt::format("client {}: {} outstanding, {} resends, {} duplicate results", options_.peer.name,
                                 session.outstanding(), session.resends(), session.duplicate_results());
            },
            [&](caf::exit_msg&) { running = false; }, caf::after(std::chrono::seconds(0)) >> [&] { more = false; });
      }
    }
    auto out = session.take_outbox();
    bus::transmit(transport, out);
  }

 private:
  void take_requests(bus::client_session& session, bus::transport& transport,
                     std::vector<detail::client_inbox::submission>& waiting, clock_type::time_point now) {
    std::vector<detail::client_inbox::event> events;
    std::vector<std::string> acks;
    {
      std::lock_guard lock(inbox_->mu);
      for (auto& s : inbox_->submissions) waiting.push_back(std::move(s));
      inbox_->submissions.clear();
      events = std::exchange(inbox_->events, {});
      acks = std::exchange(inbox_->acks, {});
    }
    for (auto& id : acks) session.acknowledge(id);
    for (auto& e : events)
      if (auto s = transport.publish(e.topic, e.data); !s.ok())
        spdlog::warn("{}: publishing on '{}' failed: {}", options_.peer.name, e.topic, s.error().message);
    // The session queues submissions made before registration and sends them
    // once registered, so nothing needs to wait here but the callbacks.
    for (auto& s : waiting) {
      if (!callbacks_.count(s.id)) callbacks_.emplace(s.id, std::move(s.on_result));
      session.submit(s.id, s.kind, s.payload, now, s.exclude);
    }
    waiting.clear();
  }


  client_actor_options options_;
  std::shared_ptr<detail::client_inbox> inbox_;
  std::map<std::string, result_callback> callbacks_;
};

}  // namespace

hub_client spawn_client(caf::actor_system& sys, client_actor_options options,
                        std::shared_ptr<bus::transport> transport) {
  auto inbox = std::make_shared<detail::client_inbox>();
  inbox->transport = std::move(transport);
  auto actor = sys.spawn<client_actor>(std::move(options), inbox);
  return hub_client(inbox, actor);
}

}  // namespace crucible::node
