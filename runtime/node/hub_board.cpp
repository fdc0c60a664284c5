#include "runtime/node/hub_board.hpp"

namespace crucible::node {

namespace {
std::string str(const flatbuffers::String* s) { return s ? s->str() : std::string(); }
}  // namespace

void show_hub(const hub::hub_core& core, dashboard::board& board, hub::clock::time_point now) {
  std::vector<dashboard::peer_row> fleet;
  for (auto& p : core.fleet(now))
    fleet.push_back({std::move(p.name), std::move(p.role), std::move(p.node), std::move(p.state), std::move(p.jobs),
                     p.free_slots, p.silent_s});
  std::vector<dashboard::queue_row> queues;
  const auto& by_kind = core.counters().by_kind;
  for (auto& [kind, j] : core.jobs_by_kind()) {
    dashboard::queue_row q{kind, j.queued, j.in_flight, j.done, 0, 0, 0};
    if (auto it = by_kind.find(kind); it != by_kind.end())
      q.submitted = it->second.submitted, q.completed = it->second.completed, q.requeued = it->second.requeued;
    queues.push_back(std::move(q));
  }
  board.update_hub(std::move(fleet), std::move(queues), now);
}

void show_event(const bus::frame& f, dashboard::board& board, std::size_t max_message_bytes, hub::clock::time_point now) {
  if (f.via != bus::channel::event || (f.topic != "Settlement" && f.topic != "ExemplarBuckets" && f.topic != "PeerEvent"))
    return;
  auto opened = messages::open(f.data, max_message_bytes);
  if (!opened || messages::kind_name((*opened)->payload_type()) != f.topic) return;  // the core counts and logs it
  if (const auto* s = (*opened)->payload_as_Settlement()) {
    board.add_settlement({str(s->candidate_id()), str(s->task_id()), str(s->group_id()),
                          msg::EnumNameSettlementStatus(s->status()), str(s->reason()), s->reward(), s->speedup_raw(),
                          s->verified(), s->policy_version(), s->settled_ns()});
    return;
  }
  if (const auto* p = (*opened)->payload_as_PeerEvent()) {
    board.update_peer(str(p->name()), msg::EnumNameRole(p->role()), str(p->node()), p->joined());
    return;
  }
  if (const auto* b = (*opened)->payload_as_ExemplarBuckets()) {
    dashboard::task_buckets t{str(b->task_id()), str((*opened)->sender()), str(b->selector()), str(b->scale()),
                              b->temperature(), b->bucket_width(), {}};
    if (b->buckets())
      for (const auto* x : *b->buckets())
        if (x) t.buckets.push_back({x->bucket(), x->low(), x->high(), x->mean(), x->count(), x->probability()});
    board.update_buckets(std::move(t), now);
  }
}

}  // namespace crucible::node
