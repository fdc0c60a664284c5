// The one crucible binary: every role and tool is a subcommand.
#include <cstdio>

#include "runtime/cli/commands.hpp"

#ifndef CRUCIBLE_VERSION
#define CRUCIBLE_VERSION "0.0.0"
#endif

int main(int argc, char** argv) {
  using namespace crucible::cli;
  CLI::App app{"crucible: asynchronous contrastive RL for CUDA kernels (CUDA-L1, built as infrastructure)"};
  app.set_version_flag("--version", std::string("crucible ") + CRUCIBLE_VERSION);
  app.require_subcommand(1);
  std::vector<command> commands{
      add_hub_command(app),
      add_worker_command(app),
      add_submit_command(app),
      add_run_command(app),
      add_pending_role(app, "rollout", "Run a rollout: generate kernels with the policy and submit them", "issue 8"),
      add_pending_role(app, "learner", "Run the learner: GRPO, SFT and weight publication", "issue 7"),
      add_pending_role(app, "detector", "Run a reward-hack detector that votes on candidates", "issue 4"),
      add_pending_role(app, "evaluator", "Run an evaluator on one GPU or a CPU core set", "issue 3"),
      add_pending_role(app, "exemplar", "Run the exemplar store service", "issue 5"),
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  for (auto& c : commands)
    if (c.app->parsed()) return c.run();
  return 2;
}
