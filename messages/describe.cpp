// Text forms of envelopes for logs (style: everything printable).
#include <fmt/format.h>

#include "messages/codec.hpp"

namespace crucible::messages {

namespace {

std::string detail(const msg::Envelope& env) {
  switch (env.payload_type()) {
    case msg::Payload::Register: {
      auto* r = env.payload_as_Register();
      return fmt::format("role={} node={} slots={} held={}", msg::EnumNameRole(r->role()),
                         str(r->node()), r->slots(), r->held_jobs() ? r->held_jobs()->size() : 0);
    }
    case msg::Payload::Heartbeat: {
      auto* h = env.payload_as_Heartbeat();
      return fmt::format("seq={} free={} last_seq={}", h->seq(), h->free_slots(), h->last_seq());
    }
    case msg::Payload::Credit: {
      auto* c = env.payload_as_Credit();
      return fmt::format("free={} last_seq={}", c->free_slots(), c->last_seq());
    }
    case msg::Payload::JobSubmit: {
      auto* j = env.payload_as_JobSubmit();
      return fmt::format("job={} kind={} {} bytes", str(j->job_id()), str(j->kind()),
                         span_of(j->payload()).size());
    }
    case msg::Payload::Job: {
      auto* j = env.payload_as_Job();
      return fmt::format("job={} kind={} seq={} attempt={}", str(j->job_id()), str(j->kind()),
                         j->seq(), j->attempt());
    }
    case msg::Payload::JobResult: {
      auto* j = env.payload_as_JobResult();
      return fmt::format("job={} status={} {} bytes", str(j->job_id()),
                         msg::EnumNameJobStatus(j->status()), span_of(j->payload()).size());
    }
    case msg::Payload::JobAccepted: return fmt::format("job={}", str(env.payload_as_JobAccepted()->job_id()));
    case msg::Payload::JobResultAck: return fmt::format("job={}", str(env.payload_as_JobResultAck()->job_id()));
    case msg::Payload::Reject: {
      auto* r = env.payload_as_Reject();
      return fmt::format("code={} ref={} reason={}", msg::EnumNameRejectCode(r->code()),
                         str(r->ref_id()), str(r->reason()));
    }
    case msg::Payload::Settlement: {
      auto* s = env.payload_as_Settlement();
      return fmt::format("candidate={} status={} reward={:.2f}", str(s->candidate_id()),
                         msg::EnumNameSettlementStatus(s->status()), s->reward());
    }
    case msg::Payload::ExemplarBuckets: {
      auto* b = env.payload_as_ExemplarBuckets();
      std::uint64_t exemplars = 0;
      if (b->buckets())
        for (const auto* x : *b->buckets()) exemplars += x ? x->count() : 0;
      return fmt::format("task={} buckets={} exemplars={}", str(b->task_id()), b->buckets() ? b->buckets()->size() : 0,
                         exemplars);
    }
    default: return {};
  }
}

}  // namespace

std::string describe(const msg::Envelope& env) {
  std::string d = detail(env);
  return fmt::format("{} id={} from {}{}{}{}", kind_name(env.payload_type()), str(env.id()),
                     str(env.sender()), d.empty() ? "" : " (", d, d.empty() ? "" : ")");
}

}  // namespace crucible::messages
