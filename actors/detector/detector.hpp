// The interface every C++ detector implements: one method that looks at a
// candidate (with its measurement) and returns a verdict. Implementations:
// static_detector.hpp (regex rules over the code), judge_detector.hpp (an
// OpenAI-compatible model endpoint). A detector written in another language
// speaks the bus schema instead (tools/detectors/example_detector.py).
//
// Who calls it: the detector actor (detector_actor.hpp), one call at a time,
// on that actor's own thread; a call may block (the judge waits for HTTP).
// Failures are verdicts (unsure, with the reason), never exceptions.
#pragma once

#include <string>

#include "actors/detector/verdict.hpp"

namespace crucible::detector {

class detector {
 public:
  virtual ~detector() = default;
  // The verdict on in. Fills kind, reason, confidence and features; the
  // caller fills candidate_id, detector and required.
  virtual verdict examine(const detect_input& in) = 0;
  // One line for logs: "static (14 rules from configs/detectors/static.toml)".
  virtual std::string describe() const = 0;
};

}  // namespace crucible::detector
