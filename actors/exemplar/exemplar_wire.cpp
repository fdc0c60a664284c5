#include "actors/exemplar/exemplar_wire.hpp"

#include <string>
#include <vector>

namespace crucible::exemplar {
namespace {

std::string text(const flatbuffers::String* s) { return s ? s->str() : std::string(); }

// settlement_status mirrors msg::SettlementStatus value for value.
static_assert(static_cast<int>(settlement_status::success) == static_cast<int>(msg::SettlementStatus::Success));
static_assert(static_cast<int>(settlement_status::failure) == static_cast<int>(msg::SettlementStatus::Failure));
static_assert(static_cast<int>(settlement_status::void_) == static_cast<int>(msg::SettlementStatus::Void));
static_assert(static_cast<int>(settlement_status::hack) == static_cast<int>(msg::SettlementStatus::Hack));
static_assert(static_cast<int>(settlement_status::no_code) == static_cast<int>(msg::SettlementStatus::NoCode));
static_assert(static_cast<int>(msg::SettlementStatus::MAX) == 4, "a new SettlementStatus needs a settlement_status");

}  // namespace

exemplar_query query_from(const msg::ExemplarQuery& q) {
  return {text(q.task_id()), q.n(), q.temperature(), q.seed()};
}

settlement settlement_from(const msg::Settlement& s) {
  auto status = static_cast<int>(s.status());
  // A status from a newer peer that this build does not know is not a success.
  settlement_status st = status >= 0 && status <= 4 ? static_cast<settlement_status>(status) : settlement_status::failure;
  return {text(s.candidate_id()), text(s.task_id()), st, s.reward(), text(s.code())};
}

flatbuffers::Offset<msg::ExemplarQuery> build_query(flatbuffers::FlatBufferBuilder& fbb, const exemplar_query& q) {
  return msg::CreateExemplarQueryDirect(fbb, q.task_id.c_str(), q.n, q.temperature, q.seed);
}

flatbuffers::Offset<msg::ExemplarAnswer> build_answer(flatbuffers::FlatBufferBuilder& fbb, const exemplar_answer& a) {
  std::vector<flatbuffers::Offset<msg::Exemplar>> items;
  for (const auto& e : a.exemplars)
    items.push_back(msg::CreateExemplar(fbb, fbb.CreateString(e.code), e.score, e.bucket, e.bucket_mean));
  return msg::CreateExemplarAnswer(fbb, fbb.CreateString(a.task_id), fbb.CreateVector(items),
                                   a.error.empty() ? 0 : fbb.CreateString(a.error));
}

flatbuffers::Offset<msg::ExemplarBuckets> build_buckets(flatbuffers::FlatBufferBuilder& fbb, const bucket_report& r) {
  std::vector<flatbuffers::Offset<msg::ExemplarBucket>> items;
  for (std::size_t i = 0; i < r.buckets.size(); ++i) {
    const auto& b = r.buckets[i];
    items.push_back(msg::CreateExemplarBucket(fbb, b.bucket, b.range.low, b.range.high, b.count, b.mean(),
                                              i < r.probability.size() ? r.probability[i] : 0.0));
  }
  return msg::CreateExemplarBuckets(fbb, fbb.CreateString(r.task_id), fbb.CreateVector(items),
                                    fbb.CreateString(to_string(r.selector)), r.temperature, r.bucket_width,
                                    fbb.CreateString(to_string(r.scale)));
}

}  // namespace crucible::exemplar
