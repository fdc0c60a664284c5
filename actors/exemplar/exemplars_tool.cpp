// A test-only `crucible` stand-in with just the exemplars command, until
// runtime/cli/main.cpp adds it.
#include <CLI/CLI.hpp>

#include "actors/exemplar/exemplars_command.hpp"

int main(int argc, char** argv) {
  CLI::App app{"crucible (exemplars only)"};
  app.require_subcommand(1);
  crucible::add_exemplars_command(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
