#include "actors/referee/referee_actor.hpp"
#include "actors/referee/referee_metrics.hpp"

#include <chrono>
#include <map>
#include <mutex>
#include <optional>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "actors/referee/referee_wire.hpp"
#include "runtime/node/caf_types.hpp"
#include "runtime/node/client_actor.hpp"
#include "storage/hack_db.hpp"

namespace crucible::referee {

// A settle job held until its candidate settles.
struct settle_request {
  std::string job_id;
  bytes payload;
  node::job_handler::done_fn done;
};

}  // namespace crucible::referee

CAF_ALLOW_UNSAFE_MESSAGE_TYPE(crucible::referee::settle_request)
CAF_ALLOW_UNSAFE_MESSAGE_TYPE(crucible::referee::job_outcome)

namespace crucible::referee {

namespace {

using settle_atom = caf::atom_constant<caf::atom("settle")>;
using result_atom = caf::atom_constant<caf::atom("result")>;
using peer_atom = caf::atom_constant<caf::atom("peer")>;
using tick_atom = caf::atom_constant<caf::atom("tick")>;
constexpr auto tick_interval = std::chrono::milliseconds(100);

// Inputs the core could not record (its ledger refused a write: a full
// disk), held and given again each tick, in arrival order; the settle jobs
// stay unanswered and the results unacknowledged until they are recorded.
struct held_inputs {
  std::map<std::string, bytes> settles;  // candidate id -> its settle job's payload
  std::vector<job_outcome> results;
  std::optional<std::chrono::steady_clock::time_point> failing_since;
  std::chrono::steady_clock::time_point last_logged;

  bool empty() const { return settles.empty() && results.empty(); }
  std::string text() const {
    return fmt::format("{} settle job(s) and {} result(s) wait", settles.size(), results.size());
  }
  // Logs a failed write at once, then once a minute while writes keep failing.
  void failed(const status& s, const std::string& what) {
    const auto now = std::chrono::steady_clock::now();
    if (failing_since && now - last_logged < std::chrono::minutes(1)) return;
    if (!failing_since) failing_since = now;
    last_logged = now;
    spdlog::error("referee: {}: {}; {} until its ledger writes again", what, s.error().text(), text());
  }
  void recovered() {
    if (!failing_since || !empty()) return;
    spdlog::info("referee: its ledger writes again after {:.0f} s",
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - *failing_since).count());
    failing_since.reset();
  }
};

struct referee_state {
  std::shared_ptr<referee_core> core;
  node::hub_client client;
  std::map<std::string, std::vector<node::job_handler::done_fn>> waiting;  // candidate id -> settle jobs
  held_inputs held;
  std::uint64_t ticks = 0;
  static inline const char* name = "referee";
};

using referee_actor_t = caf::stateful_actor<referee_state>;

// A hub client callback (on the client's thread) that hands a job's result to the referee actor.
job_outcome outcome_of(const bus::client_session::job_result& r) {
  return {r.id, r.status == msg::JobStatus::Ok, r.payload, r.error, r.worker};
}
node::result_callback forward_result(caf::actor referee) {
  return [referee](const bus::client_session::job_result& r) {
    caf::anon_send(referee, result_atom::value, outcome_of(r));
  };
}

// Hands everything the core produced to the bus and to the waiting settle jobs.
void drain(referee_actor_t* self) {
  auto& st = self->state;
  auto out = st.core->take_outbox();
  for (auto& id : out.acks) st.client.acknowledge(id);
  for (auto& e : out.publish) st.client.publish("Settlement", std::move(e));
  for (auto& j : out.jobs)
    st.client.submit(j.id, j.kind, std::move(j.payload), forward_result(caf::actor_cast<caf::actor>(self)),
                     j.exclude_worker);
  for (auto& [cid, settlement] : out.replies) {
    auto it = st.waiting.find(cid);
    if (it == st.waiting.end()) continue;
    for (auto& done : it->second) done(msg::JobStatus::Ok, settlement, {});
    st.waiting.erase(it);
  }
}

void report(referee_actor_t* self, const status& s, const std::string& what) {
  if (!s) self->state.held.failed(s, what);
}

// Records a result, or holds it when the ledger refuses the write.
void take_result(referee_actor_t* self, job_outcome r) {
  auto s = self->state.core->on_result(r, messages::now_ns());
  if (s) return;
  if (s.error().code != errc::invalid_argument) self->state.held.results.push_back(r);
  report(self, s, "recording the result of " + r.id);
}

// Gives the held inputs to the core again; those it records leave the hold.
void retry_held(referee_actor_t* self) {
  auto& held = self->state.held;
  for (auto it = held.settles.begin(); it != held.settles.end();) {
    auto s = self->state.core->on_settle(it->second, messages::now_ns());
    it = s ? held.settles.erase(it) : std::next(it);
  }
  auto results = std::exchange(held.results, {});
  for (auto& r : results) take_result(self, std::move(r));
}

caf::behavior referee_fn(referee_actor_t* self, std::shared_ptr<referee_core> core, node::hub_client client) {
  self->state.core = std::move(core);
  self->state.client = std::move(client);
  self->link_to(self->state.client.actor());
  drain(self);  // what recovery asked for
  self->delayed_send(self, tick_interval, tick_atom::value);
  return {
      [=](settle_atom, settle_request& req) {
        auto* c = payload_of<msg::Candidate>(req.payload);
        std::string cid = c ? std::string(messages::str(c->candidate_id())) : std::string();
        if (c && req.job_id != "settle/" + cid) {
          req.done(msg::JobStatus::Failed, {},
                   "a settle job's id must be settle/CANDIDATE_ID, got '" + req.job_id + "' for '" + cid + "'");
          return;
        }
        if (c) self->state.waiting[cid].push_back(req.done);
        if (auto s = self->state.core->on_settle(req.payload, messages::now_ns()); !s) {
          if (s.error().code == errc::invalid_argument) {
            spdlog::warn("referee: settle job {} refused: {}", req.job_id, s.error().text());
            self->state.waiting.erase(cid);
            req.done(msg::JobStatus::Failed, {}, s.error().message);
          } else {  // not written: the job waits for its ledger
            self->state.held.settles.emplace(cid, req.payload);
            report(self, s, "cannot record the candidate of settle job " + req.job_id);
            spdlog::warn("referee: settle job {} waits until its ledger can record it", req.job_id);
          }
        }
        drain(self);
      },
      [=](result_atom, job_outcome& r) {
        take_result(self, std::move(r));
        drain(self);
      },
      [=](peer_atom, bytes& event) {
        report(self, self->state.core->on_peer_event(event, messages::now_ns()), "a PeerEvent");
        drain(self);
      },
      [=](tick_atom) {
        retry_held(self);
        auto ticked = self->state.core->on_tick(messages::now_ns());
        report(self, ticked, "a tick");
        if (ticked) self->state.held.recovered();
        drain(self);
        if (++self->state.ticks % 100 == 0 && self->state.core->active() > 0)
          spdlog::info("{}", self->state.core->describe());  // every 10 s while candidates are in flight
        self->delayed_send(self, tick_interval, tick_atom::value);
      },
      [=](node::stats_atom) { return self->state.core->describe(); },
  };
}

// The settle job handler: hands each job to the referee actor; the job
// finishes when the candidate settles.
class settle_handler final : public node::job_handler {
 public:
  explicit settle_handler(caf::actor referee) : referee_(std::move(referee)) {}
  void run(const bus::worker_session::job_request& job, done_fn done) override {
    if (job.kind != "settle")
      return done(msg::JobStatus::Failed, {}, "the referee does not serve jobs of kind '" + job.kind + "'");
    caf::anon_send(referee_, settle_atom::value, settle_request{job.id, job.payload, std::move(done)});
  }

 private:
  caf::actor referee_;
};

}  // namespace

result<referee_service> spawn_referee(caf::actor_system& sys, const referee_options& options,
                                      std::shared_ptr<storage::kv_store> kv, referee_links links) {
  auto hacks = std::make_shared<storage::hack_db>(kv);
  auto sink = [hacks](const candidate_record& r, const std::string& reason, const std::string& detector) -> status {
    auto* c = payload_of<msg::Candidate>(r.candidate);
    storage::hack_record h;
    h.candidate_id = r.id;
    h.task_id = r.task;
    h.code = c ? std::string(messages::str(c->code())) : std::string();
    h.reason = reason;
    h.detector = detector;
    h.features = {"detector:" + detector};
    if (auto* m = r.measurement.empty() ? nullptr : payload_of<msg::Measurement>(r.measurement); m && m->defences_fired())
      for (auto d : *m->defences_fired()) h.features.push_back("defence:" + std::string(messages::str(d)));
    auto added = hacks->add(std::move(h));
    if (!added) return added.error();
    return {};
  };
  auto core = std::make_shared<referee_core>(options, kv, links.peer.name, sink);
  if (links.metrics) {
    auto m = std::make_shared<referee_metrics>(links.metrics);
    core->on_settled([m](msg::SettlementStatus verdict, bool verified) { m->record(verdict, verified); });
  }
  CRUCIBLE_TRY(core->recover(messages::now_ns()));

  node::client_actor_options co;
  co.peer = links.peer;
  co.peer.name = links.peer.name + ".client";
  co.peer.role = msg::Role::Referee;
  co.manual_acks = true;
  co.subscribe = {"PeerEvent"};
  // The referee actor exists only after the client: what the client hears
  // before then (on its own thread) waits here, then goes to the actor.
  struct forward {
    std::mutex mu;
    caf::actor to;                      // GUARDED_BY(mu)
    std::vector<caf::message> early;    // GUARDED_BY(mu)
    void send(caf::message m) {
      std::lock_guard lock(mu);
      if (to)
        caf::anon_send(to, std::move(m));
      else
        early.push_back(std::move(m));
    }
  };
  auto target = std::make_shared<forward>();
  co.on_event = [target](const std::string& topic, const bytes& data) {
    if (topic == "PeerEvent") target->send(caf::make_message(peer_atom::value, data));
  };
  // Results of jobs the previous incarnation submitted, resent by the hub.
  co.on_other_result = [target](const bus::client_session::job_result& r) {
    target->send(caf::make_message(result_atom::value, outcome_of(r)));
  };
  auto client = node::spawn_client(sys, co, links.client_transport);
  auto referee = sys.spawn(referee_fn, core, client);
  {
    std::lock_guard lock(target->mu);
    target->to = referee;
    for (auto& m : target->early) caf::anon_send(referee, std::move(m));
    target->early.clear();
  }

  bus::peer_options wp = links.peer;
  wp.role = msg::Role::Referee;
  wp.job_kinds = {"settle"};
  wp.slots = referee_slots;
  auto worker = node::spawn_worker(sys, wp, std::make_shared<settle_handler>(referee), links.worker_transport);
  return referee_service{referee, worker, "referee " + links.peer.name + " (" + describe(options) + ")"};
}

}  // namespace crucible::referee
