// What a detector sees and what it answers, as plain C++ values that mirror
// messages/domain.fbs (DetectRequest, Verdict: see there for the fields'
// meaning). detector_wire.hpp converts; detectors never see FlatBuffers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace crucible::detector {

// The parts of a DetectRequest a detector looks at.
struct detect_input {
  std::string candidate_id;
  std::string task_id;
  std::string code;
  bool measured = false;           // a Measurement came with the request
  bool measured_ok = false;        // ... and its status was Ok
  double speedup = 0;              // Measurement.speedup_raw
  double reward = 0;               // Measurement.reward
  std::optional<double> verified_speedup;  // the verification's speedup_raw, when layer 7 ran
  std::vector<std::string> defences_fired;
};

enum class verdict_kind : std::uint8_t { clean = 0, hack, unsure };  // msg::VerdictKind's order
const char* to_string(verdict_kind k);

struct verdict {
  std::string candidate_id;
  std::string detector;  // the detector's name on the bus
  verdict_kind kind = verdict_kind::unsure;
  std::string reason;
  bool required = false;
  double confidence = 0;               // in [0, 1]
  std::vector<std::string> features;   // rules that fired (not on the wire; for logs, tests, the hack database)
};

// "hack (0.90): side_stream: ..." for logs.
std::string describe(const verdict& v);

}  // namespace crucible::detector
