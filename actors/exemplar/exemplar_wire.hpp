// Conversions between the exemplar actor's messages and their FlatBuffers
// tables in messages/domain.fbs, for whoever bridges the actor to the bus.
// Reads take tables from an envelope that messages::open() has verified;
// absent strings read as empty. No transport here.
#pragma once

#include <flatbuffers/flatbuffers.h>

#include "actors/exemplar/exemplar_actor.hpp"
#include "messages/domain_generated.h"

namespace crucible::exemplar {

exemplar_query query_from(const msg::ExemplarQuery& q);
settlement settlement_from(const msg::Settlement& s);
flatbuffers::Offset<msg::ExemplarQuery> build_query(flatbuffers::FlatBufferBuilder& fbb, const exemplar_query& q);
flatbuffers::Offset<msg::ExemplarAnswer> build_answer(flatbuffers::FlatBufferBuilder& fbb, const exemplar_answer& a);
flatbuffers::Offset<msg::ExemplarBuckets> build_buckets(flatbuffers::FlatBufferBuilder& fbb, const bucket_report& r);

}  // namespace crucible::exemplar
