// Feeds: a TOML config file (configs/*.toml) as a crucible command loads it:
// config::file::load (toml++), check_sections against every section crucible
// knows (cli::known_sections), then every section's reader onto its options
// struct starting from the defaults: [log] [hub] [bus] [worker] [run]
// [referee] [detector] (and detector::validate) [rollout] [learner] [sft].
// Checks: no crash, uncaught exception or sanitizer report; a section that
// reads leaves values its own checks hold ([hub] and [bus]: dead_after past
// heartbeat; [worker]: a slot).
#include <cstdlib>

#include "actors/detector/detector_options.hpp"
#include "actors/learner/learner_config.hpp"
#include "actors/referee/referee_options.hpp"
#include "actors/rollout/rollout_options.hpp"
#include "fuzz/fuzz_support.hpp"
#include "runtime/cli/process.hpp"
#include "runtime/cli/run_options.hpp"
#include "runtime/config/runtime_options.hpp"

using namespace crucible;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static fuzz::memory_file file;
  file.set(data, size);
  auto f = config::file::load(file.path());
  if (!f) return 0;
  (void)f->check_sections(cli::known_sections());

  logging::log_options log;
  (void)config::read(f->get("log"), log);
  hub::hub_options hub;
  if (config::read(f->get("hub"), hub) && !(hub.heartbeat.count() > 0 && hub.dead_after > hub.heartbeat)) std::abort();
  bus::peer_options peer;
  std::string connect;
  if (config::read(f->get("bus"), peer, connect) && !(peer.heartbeat.count() > 0 && peer.dead_after > peer.heartbeat))
    std::abort();
  if (config::read_worker(f->get("worker"), peer) && peer.slots == 0) std::abort();
  cli::run_options run;
  (void)cli::read(f->get("run"), run);
  referee::referee_options referee;
  if (referee::read(f->get("referee"), referee)) (void)referee::describe(referee);
  detector::detector_options detector;
  if (detector::read(f->get("detector"), detector)) (void)detector::validate(detector);
  rollout::rollout_options rollout;
  if (rollout::read(f->get("rollout"), rollout)) (void)rollout::describe(rollout);
  learner::learner_options learner, sft;
  (void)config::read(f->get("learner"), learner);
  (void)config::read(f->get("sft"), sft);
  return 0;
}
