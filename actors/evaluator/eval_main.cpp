// crucible-eval: `crucible eval` as its own binary, until the crucible
// binary (runtime/cli) registers add_eval_command itself.
#include <CLI/CLI.hpp>

#include "actors/evaluator/eval_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"crucible evaluator"};
  app.require_subcommand(1);
  crucible::evaluator::add_eval_command(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
