// The one crucible binary: every role and tool is a subcommand.
#include <cstdio>

#include "runtime/base/compute_tuning.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/roles/roles.hpp"
#ifdef CRUCIBLE_HAVE_EXEMPLAR
#include "actors/exemplar/exemplars_command.hpp"
#endif
#ifdef CRUCIBLE_HAVE_EVALUATOR
#include "actors/evaluator/eval_command.hpp"
#endif
#ifdef CRUCIBLE_HAVE_DETECTOR
#include "actors/detector/detector_role.hpp"
#include "actors/detector/hacks_command.hpp"
#endif
#ifdef CRUCIBLE_HAVE_REFEREE
#include "actors/referee/referee_command.hpp"
#endif
#ifdef CRUCIBLE_HAVE_POLICY_IO
#include "actors/policy/tokenize_command.hpp"
#endif
#ifdef CRUCIBLE_HAVE_POLICY
#include "actors/policy/generate_command.hpp"
#endif
#ifdef CRUCIBLE_HAVE_LEARNER
#include "actors/learner/learner_role.hpp"
#endif
#ifdef CRUCIBLE_HAVE_ROLLOUT
#include "actors/rollout/rollout_command.hpp"
#endif

#ifndef CRUCIBLE_VERSION
#define CRUCIBLE_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  using namespace crucible::cli;
  crucible::tune_process_for_compute();
  CLI::App app{"crucible: asynchronous contrastive RL for CUDA kernels (CUDA-L1, built as infrastructure)"};
  app.set_version_flag("--version", std::string("crucible ") + CRUCIBLE_VERSION);
  app.require_subcommand(1);
  std::vector<command> commands{
      add_hub_command(app),
      add_worker_command(app),
      add_submit_command(app),
      add_keys_command(app),
      add_dashboard_command(app),
#ifdef CRUCIBLE_HAVE_RUN
      add_run_command(app),
#endif
#ifdef CRUCIBLE_HAVE_KERNELS
      add_kernels_command(app),
#endif
#ifdef CRUCIBLE_HAVE_ROLLOUT
      crucible::rollout::add_rollout_command(app),
#else
      add_pending_role(app, "rollout", "Run a rollout: generate kernels with the policy and submit them", "issue 8"),
#endif
#ifdef CRUCIBLE_HAVE_LEARNER
      crucible::learner::add_learner_role(app),
#else
      add_pending_role(app, "learner", "Run the learner: GRPO, SFT and weight publication", "issue 7"),
#endif
#ifdef CRUCIBLE_HAVE_DETECTOR
      crucible::detector::add_detector_role(app),
#else
      add_pending_role(app, "detector", "Run a reward-hack detector that votes on candidates", "issue 4"),
#endif
#ifdef CRUCIBLE_HAVE_EVALUATOR
      crucible::roles::add_evaluator_role(app),
#endif
#ifdef CRUCIBLE_HAVE_REFEREE
      crucible::referee::add_referee_command(app),
      crucible::referee::add_settle_command(app),
#endif
#ifdef CRUCIBLE_HAVE_EXEMPLAR
      crucible::roles::add_exemplar_role(app),
#endif
  };
  // Tools that run from their own CLI11 callbacks.
#ifdef CRUCIBLE_HAVE_EXEMPLAR
  crucible::exemplar::add_exemplars_command(app);
#endif
#ifdef CRUCIBLE_HAVE_DETECTOR
  crucible::detector::add_hacks_command(app);
#endif
#ifdef CRUCIBLE_HAVE_EVALUATOR
  crucible::evaluator::add_eval_command(app);
#endif
#ifdef CRUCIBLE_HAVE_POLICY_IO
  crucible::policy::add_tokenize_command(app);
#endif
#ifdef CRUCIBLE_HAVE_POLICY
  crucible::policy::add_generate_command(app);
#endif
  try {
    app.parse(argc, argv);
  } catch (const CLI::Error& e) {
    return app.exit(e);
  }
  for (auto& c : commands)
    if (c.app->parsed()) return c.run();
  return 0;  // a tool that ran from its own callback and succeeded (failures throw)
}
