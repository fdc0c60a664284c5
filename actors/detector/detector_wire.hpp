// Between the bus schema (messages/domain.fbs DetectRequest, Verdict) and the
// detectors' plain values (verdict.hpp). Used by the detector role's job
// handler and by tests that build requests the way the referee does.
#pragma once

#include "actors/detector/verdict.hpp"
#include "messages/codec.hpp"
#include "messages/domain_generated.h"

namespace crucible::detector {

detect_input input_from(const msg::DetectRequest& r);

// A Verdict envelope from sender, with id = candidate id.
messages::bytes encode_verdict(const verdict& v, std::string_view sender);
// A DetectRequest envelope (what the referee sends); for tests and tools.
messages::bytes encode_request(const detect_input& in, std::string_view sender);

// The job's id and kind for a candidate and a detector name: "detect/C/NAME", "detect:NAME".
std::string detect_job_id(std::string_view candidate_id, std::string_view detector);
std::string detect_job_kind(std::string_view detector);

}  // namespace crucible::detector
