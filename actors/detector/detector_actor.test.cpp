// The detector actor and the wire conversions: a DetectRequest built as the
// referee builds it comes out as the same input, and a verdict as a Verdict
// carrying the detector's name and required flag.
#include <doctest/doctest.h>

#include "actors/detector/detector_actor.hpp"
#include "actors/detector/detector_wire.hpp"
#include "actors/detector/static_detector.hpp"
#include "runtime/node/caf_types.hpp"

using namespace crucible;
using namespace crucible::detector;

namespace {
detect_input sample_input() {
  detect_input in;
  in.candidate_id = "cand-7";
  in.task_id = "level1/relu";
  in.code = "import threading\n";
  in.measured = in.measured_ok = true;
  in.speedup = 3.5;
  in.reward = 3.5;
  in.verified_speedup = 3.4;
  in.defences_fired = {"sync_check"};
  return in;
}
}  // namespace

TEST_CASE("a DetectRequest round-trips into the same detector input") {
  auto bytes = encode_request(sample_input(), "referee");
  auto env = messages::open(bytes);
  REQUIRE(env.ok());
  auto* req = (*env)->payload_as_DetectRequest();
  REQUIRE(req != nullptr);
  auto in = input_from(*req);
  CHECK(in.candidate_id == "cand-7");
  CHECK(in.task_id == "level1/relu");
  CHECK(in.code == "import threading\n");
  CHECK(in.measured);
  CHECK(in.measured_ok);
  CHECK(in.speedup == doctest::Approx(3.5));
  REQUIRE(in.verified_speedup.has_value());
  CHECK(*in.verified_speedup == doctest::Approx(3.4));
  CHECK(in.defences_fired == std::vector<std::string>{"sync_check"});
  CHECK(detect_job_id("cand-7", "static") == "detect/cand-7/static");
  CHECK(detect_job_kind("static") == "detect:static");
}

TEST_CASE("the actor answers with the detector's verdict under its name and required flag, and it encodes as a Verdict") {
  std::vector<rule> rules{{"threading", R"(^\s*import\s+threading)", verdict_kind::hack, "background threads", 0.9}};
  auto d = static_detector::create(rules);
  REQUIRE(d.ok());
  caf::actor_system_config cfg;
  node::configure(cfg, 1);
  caf::actor_system sys{cfg};
  auto actor = spawn_detector_actor(sys, std::move(*d), "static-a", true);
  caf::scoped_actor self{sys};
  verdict got;
  self->request(actor, caf::infinite, examine_atom::value, sample_input())
      .receive([&](verdict& v) { got = v; }, [&](caf::error& e) { FAIL(caf::to_string(e)); });
  CHECK(got.candidate_id == "cand-7");
  CHECK(got.detector == "static-a");
  CHECK(got.required);
  CHECK(got.kind == verdict_kind::hack);
  CHECK(got.reason.find("threading (line 1)") != std::string::npos);

  auto bytes = encode_verdict(got, "static-a");
  auto env = messages::open(bytes);
  REQUIRE(env.ok());
  auto* v = (*env)->payload_as_Verdict();
  REQUIRE(v != nullptr);
  CHECK(messages::str(v->candidate_id()) == "cand-7");
  CHECK(messages::str(v->detector()) == "static-a");
  CHECK(v->verdict() == msg::VerdictKind::Hack);
  CHECK(v->required());
  CHECK(v->confidence() == doctest::Approx(0.9));
  self->send_exit(actor, caf::exit_reason::user_shutdown);
}
