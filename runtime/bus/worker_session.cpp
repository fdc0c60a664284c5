#include "runtime/bus/worker_session.hpp"

#include <spdlog/spdlog.h>

namespace crucible::bus {

using messages::str;
namespace m = crucible::msg;

namespace {
constexpr std::size_t recently_acked_limit = 100'000;
}

worker_session::worker_session(peer_options options) : options_(std::move(options)) {}

void worker_session::start(clock::time_point now) {
  last_heard_ = now;
  send_register(now);
}

void worker_session::send_register(clock::time_point now) {
  last_register_ = now;
  auto& fbb = writer_.fbb();
  auto name = fbb.CreateString(options_.name);
  auto node = fbb.CreateString(options_.node);
  std::vector<flatbuffers::Offset<flatbuffers::String>> kinds, held_ids;
  for (auto& k : options_.job_kinds) kinds.push_back(fbb.CreateString(k));
  for (auto& h : held()) held_ids.push_back(fbb.CreateString(h));
  auto kv = fbb.CreateVector(kinds);
  auto hv = fbb.CreateVector(held_ids);
  auto reg = m::CreateRegister(fbb, options_.role, name, node, static_cast<std::uint32_t>(::getpid()), kv,
                               free_slots(), hv, last_seq_, options_.required, options_.deadline_ms);
  out_.push_back({channel::direct, {}, writer_.finish(reg, options_.name, options_.name)});
}

void worker_session::send_credit() {
  auto c = m::CreateCredit(writer_.fbb(), free_slots(), last_seq_);
  out_.push_back({channel::direct, {}, writer_.finish(c, options_.name)});
}

void worker_session::send_heartbeat() {
  auto& fbb = writer_.fbb();
  std::vector<flatbuffers::Offset<flatbuffers::String>> ids;
  for (auto& h : held()) ids.push_back(fbb.CreateString(h));
  auto hv = fbb.CreateVector(ids);
  auto hb = m::CreateHeartbeat(fbb, ++heartbeat_seq_, free_slots(), last_seq_, hv);
  out_.push_back({channel::direct, {}, writer_.finish(hb, options_.name)});
}

std::vector<std::string> worker_session::held() const {
  std::vector<std::string> ids(running_.begin(), running_.end());
  for (auto& w : waiting_) ids.push_back(w.id);
  for (auto& [id, _] : unacked_) ids.push_back(id);
  return ids;
}

std::uint32_t worker_session::free_slots() const {
  auto busy = running_.size() + waiting_.size();
  return busy >= options_.slots ? 0 : options_.slots - static_cast<std::uint32_t>(busy);
}

void worker_session::on_frame(const frame& f, clock::time_point now) {
  if (f.via != channel::direct) return;
  auto opened = messages::open(f.data);
  if (!opened) {
    spdlog::warn("{}: dropped a malformed message from the hub: {}", options_.name, opened.error().message);
    return;
  }
  const m::Envelope& env = **opened;
  last_heard_ = now;
  switch (env.payload_type()) {
    case m::Payload::Registered: {
      auto* r = env.payload_as_Registered();
      if (!registered_ || r->hub_session() != hub_session_)
        spdlog::info("{}: registered with hub (session {})", options_.name, r->hub_session());
      registered_ = true;
      hub_session_ = r->hub_session();
      send_credit();
      break;
    }
    case m::Payload::Reject: {
      auto* r = env.payload_as_Reject();
      if (r->code() == m::RejectCode::UnknownPeer) {
        registered_ = false;
        if (now - last_register_ >= options_.retry / 4) send_register(now);
      } else {
        spdlog::warn("{}: hub refused a message: {}", options_.name, messages::describe(env));
      }
      break;
    }
    case m::Payload::Job: {
      auto* j = env.payload_as_Job();
      std::string id(str(j->job_id()));
      last_seq_ = std::max(last_seq_, j->seq());
      if (running_.count(id) || recently_acked_.count(id) ||
          std::any_of(waiting_.begin(), waiting_.end(), [&](auto& w) { return w.id == id; })) {
        ++duplicates_;
        break;
      }
      if (auto it = unacked_.find(id); it != unacked_.end()) {  // hub missed our result
        ++duplicates_;
        out_.push_back({channel::direct, {}, it->second.envelope});
        it->second.sent = now;
        break;
      }
      auto p = messages::span_of(j->payload());
      waiting_.push_back({id, std::string(str(j->kind())), bytes(p.begin(), p.end()), j->attempt()});
      start_waiting();
      break;
    }
    case m::Payload::JobResultAck: {
      std::string id(str(env.payload_as_JobResultAck()->job_id()));
      if (unacked_.erase(id)) {
        recently_acked_.insert(id);
        acked_order_.push_back(id);
        if (acked_order_.size() > recently_acked_limit) {
          recently_acked_.erase(acked_order_.front());
          acked_order_.pop_front();
        }
      }
      break;
    }
    case m::Payload::Heartbeat: break;
    default:
      spdlog::warn("{}: ignored unexpected {}", options_.name, messages::describe(env));
  }
}

void worker_session::start_waiting() {
  while (!waiting_.empty() && running_.size() < options_.slots) {
    running_.insert(waiting_.front().id);
    ready_.push_back(std::move(waiting_.front()));
    waiting_.pop_front();
  }
}

void worker_session::complete(std::string_view job_id, msg::JobStatus status, std::span<const std::uint8_t> payload,
                              std::string_view error, clock::time_point now) {
  std::string id(job_id);
  if (!running_.erase(id)) return;  // not ours (or completed already)
  start_waiting();
  auto& fbb = writer_.fbb();
  auto idv = fbb.CreateString(id);
  auto pv = fbb.CreateVector(payload.data(), payload.size());
  auto ev = fbb.CreateString(error);
  auto wv = fbb.CreateString(options_.name);
  auto r = m::CreateJobResult(fbb, idv, status, pv, ev, wv, free_slots(), last_seq_);
  auto env = writer_.finish(r, options_.name, id);
  out_.push_back({channel::direct, {}, env});
  unacked_[id] = {std::move(env), now};
}

void worker_session::on_tick(clock::time_point now) {
  if (now - last_heard_ > options_.dead_after) {
    if (registered_) spdlog::warn("{}: hub silent for {} ms; registering again", options_.name, options_.dead_after.count());
    registered_ = false;
    if (now - last_register_ >= options_.heartbeat) send_register(now);
  }
  if (now - last_heartbeat_ >= options_.heartbeat) {
    last_heartbeat_ = now;
    if (registered_) send_heartbeat();
  }
  for (auto& [id, r] : unacked_)
    if (now - r.sent >= options_.retry) {
      out_.push_back({channel::direct, {}, r.envelope});
      r.sent = now;
    }
}

}  // namespace crucible::bus
