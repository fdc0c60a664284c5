#include "runtime/hub/hub_core.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace crucible::hub {

using messages::str;
namespace m = crucible::msg;

namespace {
bool contains(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* v, const std::string& id) {
  if (!v) return false;
  for (auto s : *v)
    if (str(s) == id) return true;
  return false;
}
}  // namespace

bool hub_core::peer::serves(const std::string& kind) const {
  for (auto& k : kinds)
    if (k == "*" || k == kind) return true;
  return false;
}

hub_core::hub_core(hub_options options, job_ledger& ledger, std::uint64_t session)
    : options_(std::move(options)), ledger_(ledger), session_(session) {}

status hub_core::recover(clock::time_point now) {
  auto entries = ledger_.load();
  if (!entries) return entries.error();
  std::size_t done = 0;
  for (auto& e : *entries) {
    auto env = messages::open(e.submit);
    if (!env || (*env)->payload_type() != m::Payload::JobSubmit)
      return make_error(errc::corrupt, "job ledger holds an entry that is not a JobSubmit");
    auto* s = (*env)->payload_as_JobSubmit();
    job j;
    j.id = std::string(str(s->job_id()));
    j.kind = std::string(str(s->kind()));
    j.submitter = std::string(str((*env)->sender()));
    j.exclude = std::string(str(s->exclude_worker()));
    j.since = now;
    if (e.result.empty()) {
      j.state = job_state::recovering;
      j.submit = std::move(e.submit);
    } else {
      j.state = job_state::done;
      j.result = std::move(e.result);
      j.result_in_ledger = true;
      ++done;
    }
    jobs_.emplace(j.id, std::move(j));
  }
  recovery_ends_ = now + options_.recovery_grace;
  if (!jobs_.empty())
    spdlog::info("hub recovered {} unfinished and {} completed-unacknowledged jobs from the ledger; "
                 "dispatch resumes in {} ms unless workers claim them",
                 jobs_.size() - done, done, options_.recovery_grace.count());
  return {};
}

void hub_core::on_frame(bus::frame f, clock::time_point now) {
  ++counters_.received;
  if (f.via == bus::channel::event) return handle_event(f, now);

  auto opened = messages::open(f.data, options_.max_message_bytes);
  if (!opened) {
    ++counters_.malformed;
    spdlog::warn("dropped a malformed message of {} bytes from peer '{}': {}", f.data.size(), f.peer,
                 opened.error().message);
    return;
  }
  const m::Envelope& env = **opened;
  if (str(env.sender()) != f.peer) {
    ++counters_.malformed;
    spdlog::warn("dropped {}: sender '{}' does not match the connection's name '{}'",
                 messages::kind_name(env.payload_type()), str(env.sender()), f.peer);
    return;
  }
  if (env.payload_type() == m::Payload::Register)
    return handle_register(f.peer, env, *env.payload_as_Register(), now);

  auto it = peers_.find(f.peer);
  if (it == peers_.end()) {
    ++counters_.rejected;
    reply_reject(f.peer, m::RejectCode::UnknownPeer, str(env.id()), "register first (the hub may have restarted)");
    return;
  }
  peer& p = it->second;
  p.last_seen = now;

  switch (env.payload_type()) {
    case m::Payload::Heartbeat: {
      auto* h = env.payload_as_Heartbeat();
      if (!p.kinds.empty()) handle_status(p, h->free_slots(), h->last_seq(), h->held_jobs(), now);
      break;
    }
    case m::Payload::Credit: {
      auto* c = env.payload_as_Credit();
      handle_status(p, c->free_slots(), c->last_seq(), nullptr, now);
      break;
    }
    case m::Payload::JobSubmit: handle_submit(p, f.data, *env.payload_as_JobSubmit(), now); break;
    case m::Payload::JobResult: handle_result(p, f.data, *env.payload_as_JobResult(), now); break;
    case m::Payload::JobResultAck: handle_client_ack(*env.payload_as_JobResultAck()); break;
    default:
      ++counters_.rejected;
      spdlog::warn("refused {} from '{}': not accepted on the hub's direct endpoint",
                   messages::kind_name(env.payload_type()), f.peer);
      reply_reject(f.peer, m::RejectCode::UnexpectedKind, str(env.id()),
                   fmt::format("{} is not accepted here; publish it as an event", messages::kind_name(env.payload_type())));
  }
}

void hub_core::handle_register(const std::string& from, const msg::Envelope& env, const msg::Register& r,
                               clock::time_point now) {
  bool known = peers_.count(from) > 0;
  peer& p = peers_[from];
  p.name = from;
  p.node = std::string(str(r.node()));
  p.role = r.role();
  p.kinds.clear();
  if (r.job_kinds())
    for (auto k : *r.job_kinds()) p.kinds.emplace_back(str(k));
  p.last_seen = now;
  p.free_slots = r.slots();
  p.required = r.required();
  p.deadline_ms = r.deadline_ms();
  p.last_seq = r.last_seq();
  p.next_seq = std::max(p.next_seq, r.last_seq() + 1);

  // Jobs this name held before that it no longer holds were lost with its
  // previous incarnation; jobs it holds that we did not know of are claimed.
  std::vector<std::string> lost;
  for (auto& [id, seq] : p.assigned)
    if (!contains(r.held_jobs(), id)) lost.push_back(id);
  for (auto& id : lost) {
    job* j = find_job(id);
    if (j && j->state == job_state::assigned) requeue(*j);
  }
  if (r.held_jobs()) {
    for (auto s : *r.held_jobs()) {
      job* j = find_job(str(s));
      if (!j || j->state == job_state::done || j->state == job_state::assigned) continue;
      if (j->state == job_state::queued) {
        auto& q = queues_[j->kind];
        q.erase(std::remove(q.begin(), q.end(), j->id), q.end());
      }
      j->state = job_state::assigned;
      j->worker = from;
      j->seq = 0;  // confirmed: the worker holds it
      j->dispatched_at = now;
      p.assigned.emplace(j->id, 0);
    }
  }
  // After a restart the hub learns here who submitted done jobs: resend.
  for (auto& [id, j] : jobs_)
    if (j.state == job_state::done && j.submitter == from && !j.result.empty()) send(from, j.result);

  auto ok = m::CreateRegistered(writer_.fbb(), session_, static_cast<std::uint32_t>(options_.heartbeat.count()),
                                static_cast<std::uint32_t>(options_.dead_after.count()));
  send(from, writer_.finish(ok, "hub", str(env.id())));
  publish_peer(p, true);
  spdlog::info("{} {} '{}' on {} (kinds: {}, slots: {}, holds {} jobs)", known ? "re-registered" : "registered",
               m::EnumNameRole(r.role()), from, p.node, fmt::join(p.kinds, ","), r.slots(),
               r.held_jobs() ? r.held_jobs()->size() : 0);
}

void hub_core::handle_status(peer& p, std::uint32_t free_slots, std::uint64_t last_seq,
                             const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>* held,
                             clock::time_point) {
  p.free_slots = free_slots;
  p.last_seq = std::max(p.last_seq, last_seq);
  if (!held) return;
  // A job the worker has seen past (seq <= last_seq) but does not hold and
  // has not reported never arrived: dispatch it again.
  std::vector<std::string> lost;
  for (auto& [id, seq] : p.assigned)
    if (seq != 0 && seq <= last_seq && !contains(held, id)) lost.push_back(id);
  for (auto& id : lost) {
    job* j = find_job(id);
    spdlog::debug("job {} never reached '{}': re-queued", id, p.name);
    requeue(*j);
  }
}

void hub_core::handle_submit(peer& p, bus::bytes& raw, const msg::JobSubmit& s, clock::time_point now) {
  std::string id(str(s.job_id()));
  if (id.empty() || !s.kind() || s.kind()->size() == 0) {
    ++counters_.rejected;
    reply_reject(p.name, m::RejectCode::Malformed, id, "JobSubmit needs a job_id and a kind");
    return;
  }
  if (job* j = find_job(id)) {
    if (!j->recorded && ledger_.failing()) return refuse_unrecorded(p, id);
    ++counters_.duplicates;
    if (j->state == job_state::done) {
      if (j->submitter.empty()) j->submitter = p.name;
      send(p.name, j->result);
    } else {
      send_accepted(p.name, id, true);
    }
    return;
  }
  if (recently_acked_.count(id)) {
    ++counters_.duplicates;
    send_consumed(p.name, id);
    return;
  }
  auto acked = ledger_.was_acked(id);
  if (!acked) {
    ++counters_.rejected;
    spdlog::error("job ledger lookup failed for {}: {}", id, acked.error().text());
    reply_reject(p.name, m::RejectCode::Overloaded, id, "ledger unavailable; retry");
    return;
  }
  if (*acked) {
    ++counters_.duplicates;
    send_consumed(p.name, id);
    return;
  }
  if (ledger_.failing()) return refuse_unrecorded(p, id);
  if (queued_jobs() >= options_.max_queued_jobs) {
    ++counters_.rejected;
    reply_reject(p.name, m::RejectCode::Overloaded, id,
                 fmt::format("{} jobs are queued (max_queued_jobs); retry later", queued_jobs()));
    return;
  }
  ledger_.stage_submit(id, raw);
  job j;
  j.id = id;
  j.kind = std::string(str(s.kind()));
  j.submitter = p.name;
  j.exclude = std::string(str(s.exclude_worker()));
  j.submit = std::move(raw);  // s points into it; not read after this
  j.state = job_state::queued;
  j.since = now;
  j.recorded = false;
  unrecorded_.push_back(id);
  auto [it, _] = jobs_.emplace(id, std::move(j));
  queues_[it->second.kind].push_back(id);
  ++counters_.submitted;
  ++counters_.by_kind[it->second.kind].submitted;
  send_accepted(p.name, id, false);
}

void hub_core::handle_result(peer& p, bus::bytes& raw, const msg::JobResult& r,
                             clock::time_point now) {
  std::string id(str(r.job_id()));
  handle_status(p, r.free_slots(), r.last_seq(), nullptr, now);
  job* j = find_job(id);
  if (j && j->state == job_state::done && !j->result_in_ledger) {
    // The worker sent it again: the submitter is slow to acknowledge. Keep
    // the result in the ledger from now on and let the worker forget it.
    ++counters_.duplicates;
    ledger_.stage_result(id, j->result);
    j->result_in_ledger = true;
    j->result_from.clear();
    send_result_ack(p.name, id);
    return;
  }
  if (!j || j->state == job_state::done) {
    ++counters_.duplicates;
    send_result_ack(p.name, id);
    return;
  }
  if (j->state == job_state::queued) {
    auto& q = queues_[j->kind];
    q.erase(std::remove(q.begin(), q.end(), id), q.end());
  }
  unassign(*j);
  j->state = job_state::done;
  j->result = std::move(raw);  // r points into it; not read after this
  j->submit.clear();
  j->submit.shrink_to_fit();
  ++counters_.completed;
  ++counters_.by_kind[j->kind].completed;
  if (!j->submitter.empty()) send(j->submitter, j->result);
  // The worker keeps the result until the submitter acknowledges it (then
  // the hub acknowledges it to the worker), so the common case writes no
  // result to the ledger; a worker resends unacknowledged results, and a
  // resend (above) or a submitter unknown here puts it in the ledger.
  if (j->submitter.empty()) {
    ledger_.stage_result(id, j->result);
    j->result_in_ledger = true;
    send_result_ack(p.name, id);
  } else {
    j->result_from = p.name;
  }
}

void hub_core::handle_client_ack(const msg::JobResultAck& a) {
  std::string id(str(a.job_id()));
  job* j = find_job(id);
  if (!j || j->state != job_state::done) return;  // duplicate ack, or ack of an unknown job
  ledger_.stage_acked(id, messages::now_ns());
  if (!j->result_from.empty()) send_result_ack(j->result_from, id);
  jobs_.erase(id);
  recently_acked_.insert(id);
  acked_order_.push_back(id);
  if (acked_order_.size() > 100'000) {
    recently_acked_.erase(acked_order_.front());
    acked_order_.pop_front();
  }
}

void hub_core::handle_event(const bus::frame& f, clock::time_point) {
  auto opened = messages::open(f.data, options_.max_message_bytes);
  if (!opened) {
    ++counters_.malformed;
    spdlog::warn("dropped a malformed event of {} bytes on topic '{}': {}", f.data.size(), f.topic,
                 opened.error().message);
    return;
  }
  auto kind = messages::kind_name((*opened)->payload_type());
  if (f.topic != kind) {
    ++counters_.malformed;
    spdlog::warn("dropped an event on topic '{}' that carries a {} (topic must be the payload kind)", f.topic, kind);
    return;
  }
  ++counters_.events_forwarded;
  out_.push_back({bus::channel::event, f.topic, f.data});
}

void hub_core::on_tick(clock::time_point now) {
  if (now - last_registry_ >= 10 * options_.heartbeat) {  // for subscribers that joined late
    last_registry_ = now;
    for (auto& [name, p] : peers_) publish_peer(p, true);
  }
  if (now - last_heartbeat_ >= options_.heartbeat) {
    last_heartbeat_ = now;
    ++heartbeat_seq_;
    for (auto& [name, p] : peers_) {
      auto hb = m::CreateHeartbeat(writer_.fbb(), heartbeat_seq_);
      send(name, writer_.finish(hb, "hub"));
    }
  }
  std::vector<std::string> dead;
  for (auto& [name, p] : peers_)
    if (now - p.last_seen > options_.dead_after) dead.push_back(name);
  for (auto& name : dead) {
    peer& p = peers_[name];
    ++counters_.peers_lost;
    spdlog::warn("{} '{}' on {} silent for {} ms: declared dead, {} jobs re-queued", m::EnumNameRole(p.role), name,
                 p.node, std::chrono::duration_cast<std::chrono::milliseconds>(now - p.last_seen).count(),
                 p.assigned.size());
    requeue_jobs_of(p, "dead");
    publish_peer(p, false);
    peers_.erase(name);
  }
  // Dispatches the worker never confirmed (seq beyond what it reports seeing).
  // The slot each held stays taken until the worker reports again: a worker
  // that fell silent would otherwise get the next job, or this one, back.
  for (auto& [name, p] : peers_) {
    std::vector<std::string> lost;
    for (auto& [id, seq] : p.assigned) {
      job* j = find_job(id);
      if (j && seq > p.last_seq && now - j->dispatched_at > options_.redispatch_after) lost.push_back(id);
    }
    for (auto& id : lost) {
      requeue(*find_job(id));
      if (p.free_slots > 0) --p.free_slots;
    }
  }
  if (recovery_ends_ != clock::time_point{} && now >= recovery_ends_) {
    recovery_ends_ = {};
    std::size_t n = 0;
    for (auto& [id, j] : jobs_)
      if (j.state == job_state::recovering) {
        j.state = job_state::queued;
        queues_[j.kind].push_back(id);
        ++n;
      }
    if (n) spdlog::info("recovery over: {} unclaimed jobs queued for dispatch", n);
  }
  auto now_ns = messages::now_ns();
  if (now_ns - last_purge_ns_ > std::int64_t(60) * 1'000'000'000) {
    last_purge_ns_ = now_ns;
    auto cutoff = now_ns - std::chrono::duration_cast<std::chrono::nanoseconds>(options_.retain_acked).count();
    if (auto purged = ledger_.purge_acked(cutoff); !purged)
      spdlog::error("purging acknowledged jobs failed: {}", purged.error().text());
  }
}

void hub_core::enqueue_front(job& j) {
  j.state = job_state::queued;
  queues_[j.kind].push_front(j.id);
}

void hub_core::requeue(job& j) {
  unassign(j);
  enqueue_front(j);
  ++counters_.requeued;
  ++counters_.by_kind[j.kind].requeued;
}

void hub_core::unassign(job& j) {
  if (j.state != job_state::assigned) return;
  if (auto it = peers_.find(j.worker); it != peers_.end()) it->second.assigned.erase(j.id);
  j.worker.clear();
  j.seq = 0;
}

void hub_core::requeue_jobs_of(peer& p, const char*) {
  std::vector<std::string> ids;
  for (auto& [id, seq] : p.assigned) ids.push_back(id);
  for (auto& id : ids)
    if (job* j = find_job(id); j && j->state == job_state::assigned) requeue(*j);
}

std::uint32_t hub_core::credit(const peer& p) const {
  std::uint32_t unconfirmed = 0;
  for (auto& [id, seq] : p.assigned)
    if (seq > p.last_seq) ++unconfirmed;
  return p.free_slots > unconfirmed ? p.free_slots - unconfirmed : 0;
}

void hub_core::dispatch(clock::time_point now) {
  bool any_queued = false;
  for (auto& [kind, q] : queues_)
    if (!q.empty()) any_queued = true;
  if (!any_queued) return;
  for (auto& [name, p] : peers_) {
    if (p.kinds.empty()) continue;
    for (std::uint32_t c = credit(p); c > 0; --c) {
      job* next = next_job_for(p);
      if (!next) break;
      auto env = messages::open(next->submit);
      CRUCIBLE_CHECK(env.ok(), "a queued job's submit envelope was verified on arrival");
      auto* s = (*env)->payload_as_JobSubmit();
      next->state = job_state::assigned;
      next->worker = name;
      next->seq = p.next_seq++;
      next->attempt += 1;
      next->dispatched_at = now;
      p.assigned.emplace(next->id, next->seq);
      auto& fbb = writer_.fbb();
      auto id = fbb.CreateString(next->id);
      auto kind = fbb.CreateString(next->kind);
      auto payload = s->payload() ? fbb.CreateVector(s->payload()->data(), s->payload()->size()) : 0;
      auto jb = m::CreateJob(fbb, id, kind, payload, next->seq, next->attempt);
      send(name, writer_.finish(jb, "hub", next->id));
      ++counters_.dispatched;
      ++counters_.by_kind[next->kind].dispatched;
    }
  }
}

hub_core::job* hub_core::next_job_for(const peer& p) {
  for (auto& [kind, q] : queues_) {
    if (q.empty() || !p.serves(kind)) continue;
    // The first job this worker may take; a job that excludes it waits for
    // another (looked for among the first few, to keep dispatch cheap).
    std::size_t limit = std::min<std::size_t>(q.size(), 64);
    for (std::size_t i = 0; i < limit; ++i) {
      job* j = find_job(q[i]);
      if (j->exclude == p.name) continue;
      if (!j->recorded && ledger_.failing()) continue;  // no work on a job the hub may forget
      q.erase(q.begin() + static_cast<long>(i));
      return j;
    }
  }
  return nullptr;
}

void hub_core::publish_peer(const peer& p, bool joined) {
  auto& fbb = writer_.fbb();
  std::vector<flatbuffers::Offset<flatbuffers::String>> kinds;
  for (auto& k : p.kinds) kinds.push_back(fbb.CreateString(k));
  auto name = fbb.CreateString(p.name);
  auto node = fbb.CreateString(p.node);
  auto kv = fbb.CreateVector(kinds);
  auto ev = m::CreatePeerEvent(fbb, name, p.role, node, joined, kv, p.required, p.deadline_ms);
  out_.push_back({bus::channel::event, "PeerEvent", writer_.finish(ev, "hub", p.name)});
}

status hub_core::finish_batch(clock::time_point now) {
  dispatch(now);
  auto s = ledger_.commit();
  report_ledger(s, now);
  if (s.ok()) {
    for (auto& id : unrecorded_)
      if (job* j = find_job(id)) j->recorded = true;
    unrecorded_.clear();
    return s;
  }
  // What acknowledges a write waits for the writes (the peers send again),
  // and so does the dispatch of a job whose submit is not written yet;
  // refusals, heartbeats, registrations, other dispatches and events go out.
  std::set<std::string> held;
  for (auto& id : unrecorded_)
    if (job* j = find_job(id); j && j->state == job_state::assigned) {
      held.insert(id);
      unassign(*j);
      enqueue_front(*j);
    }
  std::erase_if(out_, [&held](const bus::outbound& o) {
    if (o.via != bus::channel::direct) return false;
    auto env = messages::open(o.data);
    if (!env) return false;
    auto kind = (*env)->payload_type();
    if (kind == m::Payload::Job) return held.count(std::string(str((*env)->payload_as_Job()->job_id()))) > 0;
    return kind == m::Payload::JobAccepted || kind == m::Payload::JobResultAck;
  });
  return s;
}

// A submit the hub cannot record while its ledger fails (a full disk).
void hub_core::refuse_unrecorded(const peer& p, const std::string& id) {
  ++counters_.rejected;
  reply_reject(p.name, m::RejectCode::Overloaded, id,
               fmt::format("the hub cannot record new jobs: its job ledger failed ({}); retry later",
                           ledger_.failing()->text()));
}

// A failing ledger (a full disk) is reported when it starts, every minute
// while it lasts, and when it ends.
void hub_core::report_ledger(const status& s, clock::time_point now) {
  if (!s.ok() && ledger_failing_since_ == clock::time_point{}) {
    ledger_failing_since_ = ledger_reported_ = now;
    spdlog::error("job ledger in {} cannot write: {}; new jobs are refused and acknowledgements wait until it can",
                  options_.ledger_dir, s.error().text());
  } else if (!s.ok() && now - ledger_reported_ >= std::chrono::minutes(1)) {
    ledger_reported_ = now;
    spdlog::error("job ledger in {} still cannot write: {}", options_.ledger_dir, s.error().text());
  } else if (s.ok() && ledger_failing_since_ != clock::time_point{}) {
    spdlog::info("job ledger in {} writes again after {} s; new jobs are accepted", options_.ledger_dir,
                 std::chrono::duration_cast<std::chrono::seconds>(now - ledger_failing_since_).count());
    ledger_failing_since_ = {};
  }
}

hub_core::job* hub_core::find_job(std::string_view id) {
  auto it = jobs_.find(std::string(id));
  return it == jobs_.end() ? nullptr : &it->second;
}

void hub_core::reply_reject(const std::string& to, msg::RejectCode code, std::string_view ref, std::string_view reason) {
  auto& fbb = writer_.fbb();
  auto r = m::CreateReject(fbb, code, fbb.CreateString(ref), fbb.CreateString(reason));
  send(to, writer_.finish(r, "hub", ref));
}

void hub_core::send_accepted(const std::string& to, std::string_view job_id, bool duplicate) {
  auto& fbb = writer_.fbb();
  auto a = m::CreateJobAccepted(fbb, fbb.CreateString(job_id), duplicate);
  send(to, writer_.finish(a, "hub", job_id));
}

// Answers a submit of a job whose result its submitter already acknowledged
// (the ledger keeps only that it was): a late resend, which the client
// drops, or an id used twice, whose submitter would otherwise wait forever.
void hub_core::send_consumed(const std::string& to, std::string_view job_id) {
  auto& fbb = writer_.fbb();
  auto error = fmt::format("job {} was answered before and its submitter acknowledged the result; job ids are single-use",
                           job_id);
  auto r = m::CreateJobResult(fbb, fbb.CreateString(job_id), m::JobStatus::Failed, 0, fbb.CreateString(error),
                              fbb.CreateString("hub"));
  send(to, writer_.finish(r, "hub", job_id));
}

void hub_core::send_result_ack(const std::string& to, std::string_view job_id) {
  auto& fbb = writer_.fbb();
  auto a = m::CreateJobResultAck(fbb, fbb.CreateString(job_id));
  send(to, writer_.finish(a, "hub", job_id));
}

void hub_core::send(const std::string& to, bus::bytes data) {
  out_.push_back({bus::channel::direct, to, std::move(data)});
}

std::size_t hub_core::queued_jobs() const {
  std::size_t n = 0;
  for (auto& [k, q] : queues_) n += q.size();
  return n;
}

std::size_t hub_core::live_workers() const {
  return std::count_if(peers_.begin(), peers_.end(), [](auto& kv) { return !kv.second.kinds.empty(); });
}

std::map<std::string, kind_jobs> hub_core::jobs_by_kind() const {
  std::map<std::string, kind_jobs> out;
  for (auto& [kind, q] : queues_) out[kind];  // kinds seen stay listed, at 0
  for (auto& [id, j] : jobs_) {
    auto& k = out[j.kind];
    if (j.state == job_state::assigned) ++k.in_flight;
    else if (j.state == job_state::done) ++k.done;
    else ++k.queued;
  }
  return out;
}

std::map<std::string, std::size_t> hub_core::peers_by_role() const {
  std::map<std::string, std::size_t> out;
  for (auto& [name, p] : peers_) ++out[m::EnumNameRole(p.role)];
  return out;
}

std::vector<peer_view> hub_core::fleet(clock::time_point now) const {
  std::vector<peer_view> out;
  for (auto& [name, p] : peers_) {
    peer_view v{name, p.node, m::EnumNameRole(p.role), p.kinds, p.free_slots, {}, {}, 0};
    for (auto& [id, seq] : p.assigned) {
      auto it = jobs_.find(id);
      v.jobs.emplace_back(it == jobs_.end() ? std::string() : it->second.kind, id);
    }
    v.silent_s = std::chrono::duration<double>(now - p.last_seen).count();
    v.state = now - p.last_seen > 3 * options_.heartbeat ? "silent"
              : !v.jobs.empty()                           ? "busy"
              : p.kinds.empty()                           ? "client"
                                                          : "idle";
    out.push_back(std::move(v));
  }
  return out;
}

std::string hub_core::describe(clock::time_point now) const {
  auto line = fmt::format("hub: {} peers ({} workers), {} queued, {} unfinished", peers_.size(), live_workers(),
                          queued_jobs(), jobs_.size());
  const job* oldest = nullptr;
  for (auto& [id, j] : jobs_)
    if (!oldest || j.since < oldest->since) oldest = &j;
  if (oldest) {
    const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - oldest->since).count();
    const std::string where = oldest->state == job_state::assigned  ? fmt::format("held by '{}'", oldest->worker)
                              : oldest->state == job_state::done      ? fmt::format("answered, not yet acknowledged by '{}'", oldest->submitter)
                              : oldest->state == job_state::recovering ? std::string("recovered, waiting for its worker")
                                                                       : std::string("queued");
    line += fmt::format(" (the oldest: {} of kind {}, {}, for {} s)", oldest->id, oldest->kind, where, age);
  }
  return line + fmt::format("; received {} malformed {} rejected {} submitted {} duplicates {} dispatched {} "
                            "completed {} requeued {}",
                            counters_.received, counters_.malformed, counters_.rejected, counters_.submitted,
                            counters_.duplicates, counters_.dispatched, counters_.completed, counters_.requeued);
}

}  // namespace crucible::hub
