#include "runtime/bus/client_session.hpp"

#include <spdlog/spdlog.h>

namespace crucible::bus {

using messages::str;
namespace m = crucible::msg;

client_session::client_session(peer_options options, bool manual_acks)
    : options_(std::move(options)), manual_acks_(manual_acks) {
  options_.role = m::Role::Client;
}

void client_session::start(clock::time_point now) {
  last_heard_ = now;
  send_register(now);
}

void client_session::send_register(clock::time_point now) {
  last_register_ = now;
  auto& fbb = writer_.fbb();
  auto name = fbb.CreateString(options_.name);
  auto node = fbb.CreateString(options_.node);
  auto reg = m::CreateRegister(fbb, m::Role::Client, name, node, static_cast<std::uint32_t>(::getpid()));
  out_.push_back({channel::direct, {}, writer_.finish(reg, options_.name, options_.name)});
}

void client_session::submit(std::string_view id, std::string_view kind, std::span<const std::uint8_t> payload,
                            clock::time_point now, std::string_view exclude_worker) {
  std::string key(id);
  if (outstanding_.count(key) || delivered_.count(key)) return;
  auto& fbb = writer_.fbb();
  auto idv = fbb.CreateString(id);
  auto kv = fbb.CreateString(kind);
  auto pv = fbb.CreateVector(payload.data(), payload.size());
  auto ex = exclude_worker.empty() ? 0 : fbb.CreateString(exclude_worker);
  auto s = m::CreateJobSubmit(fbb, idv, kv, pv, ex);
  auto env = writer_.finish(s, options_.name, id);
  if (registered_) out_.push_back({channel::direct, {}, env});
  outstanding_[key] = {std::move(env), now, false};
}

void client_session::resend_all(clock::time_point now) {
  for (auto& [id, p] : outstanding_) {
    out_.push_back({channel::direct, {}, p.envelope});
    p.sent = now;
    ++resends_;
  }
}

void client_session::ack(const std::string& id) {
  auto& fbb = writer_.fbb();
  auto a = m::CreateJobResultAck(fbb, fbb.CreateString(id));
  out_.push_back({channel::direct, {}, writer_.finish(a, options_.name, id)});
}

void client_session::acknowledge(const std::string& id) {
  if (unconfirmed_.erase(id)) ack(id);
}

void client_session::on_frame(const frame& f, clock::time_point now) {
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
      bool fresh = !registered_ || r->hub_session() != hub_session_;
      registered_ = true;
      hub_session_ = r->hub_session();
      if (fresh) resend_all(now);  // a new hub session may have missed anything
      break;
    }
    case m::Payload::JobAccepted: {
      auto it = outstanding_.find(std::string(str(env.payload_as_JobAccepted()->job_id())));
      if (it != outstanding_.end()) it->second.accepted = true;
      break;
    }
    case m::Payload::JobResult: {
      auto* r = env.payload_as_JobResult();
      std::string id(str(r->job_id()));
      auto it = outstanding_.find(id);
      if (it == outstanding_.end()) {
        // With manual acks a result this incarnation never asked for (the
        // hub resends them when we register) is still the owner's to record:
        // a previous incarnation may have died before it did.
        bool unknown = !delivered_.count(id);
        if (!manual_acks_ || !unknown) {
          if (!unknown) ++duplicate_results_;
          if (!unconfirmed_.count(id)) ack(id);
          break;
        }
      } else {
        outstanding_.erase(it);
      }
      delivered_.insert(id);
      auto p = messages::span_of(r->payload());
      results_.push_back({id, r->status(), bytes(p.begin(), p.end()), std::string(str(r->error())),
                          std::string(str(r->worker()))});
      if (manual_acks_)
        unconfirmed_.insert(id);
      else
        ack(id);
      break;
    }
    case m::Payload::Reject: {
      auto* r = env.payload_as_Reject();
      if (r->code() == m::RejectCode::UnknownPeer) {
        registered_ = false;
        if (now - last_register_ >= options_.retry / 4) send_register(now);
      } else if (r->code() == m::RejectCode::Overloaded) {
        if (auto it = outstanding_.find(std::string(str(r->ref_id()))); it != outstanding_.end()) it->second.sent = now;
        if (std::string why(str(r->reason())); why != last_refusal_) {  // once per reason, not per job
          spdlog::warn("{}: hub refused job {} for now, retrying: {}", options_.name, str(r->ref_id()), why);
          last_refusal_ = why;
        }
      } else {
        spdlog::warn("{}: hub refused a message: {}", options_.name, messages::describe(env));
      }
      break;
    }
    case m::Payload::Heartbeat: break;
    default: spdlog::warn("{}: ignored unexpected {}", options_.name, messages::describe(env));
  }
}

void client_session::on_tick(clock::time_point now) {
  if (now - last_heard_ > options_.dead_after) {
    if (registered_) spdlog::warn("{}: hub silent for {} ms; registering again", options_.name, options_.dead_after.count());
    registered_ = false;
  }
  if (!registered_) {
    if (now - last_register_ >= options_.heartbeat) send_register(now);
    return;
  }
  if (now - last_heartbeat_ >= options_.heartbeat) {
    last_heartbeat_ = now;
    auto hb = m::CreateHeartbeat(writer_.fbb(), ++heartbeat_seq_);
    out_.push_back({channel::direct, {}, writer_.finish(hb, options_.name)});
  }
  if (now - last_resend_scan_ < options_.retry / 4) return;
  last_resend_scan_ = now;
  for (auto& [id, p] : outstanding_) {
    auto wait = p.accepted ? options_.accepted_retry : options_.retry;
    if (now - p.sent >= wait) {
      out_.push_back({channel::direct, {}, p.envelope});
      p.sent = now;
      ++resends_;
    }
  }
}

}  // namespace crucible::bus
