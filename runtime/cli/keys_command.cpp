// `crucible keys`: the bus's CURVE key folders (runtime/bus/curve_keys.hpp).
//   crucible keys generate DIR [--hub HUB_DIR]   a node's key pair; with --hub,
//                                                also allowed on that hub
//   crucible keys allow HUB_DIR PEER_DIR         list PEER_DIR's key on the hub
// A hub and every peer then run with `--keys DIR` (or `[bus] keys`).
#include <iostream>

#include "runtime/bus/curve_keys.hpp"
#include "runtime/cli/commands.hpp"
#include "runtime/cli/process.hpp"

namespace crucible::cli {

namespace {
struct keys_args {
  std::string dir, hub, peer;
};

int run_generate(const keys_args& a) {
  auto pub = bus::generate_keys(a.dir);
  if (!pub) return fail(pub.error());
  std::cout << "wrote " << a.dir << "/public.key and " << a.dir << "/secret.key (public key " << *pub << ")\n";
  if (a.hub.empty()) return 0;
  if (auto s = bus::allow_peer(a.hub, a.dir); !s) return fail(s.error());
  std::cout << "allowed on the hub of " << a.hub << " (" << a.hub << "/authorized_keys; " << a.dir << "/hub.key)\n";
  return 0;
}

int run_allow(const keys_args& a) {
  if (auto s = bus::allow_peer(a.hub, a.peer); !s) return fail(s.error());
  std::cout << "allowed " << a.peer << " on the hub of " << a.hub << "\n";
  return 0;
}
}  // namespace

command add_keys_command(CLI::App& app) {
  auto a = std::make_shared<keys_args>();
  auto* cmd = app.add_subcommand("keys", "CURVE keys of the bus: a key folder per node, the hub's allow list");
  cmd->require_subcommand(1);
  auto* gen = cmd->add_subcommand("generate", "Write a fresh key pair (public.key, secret.key) into DIR");
  gen->add_option("DIR", a->dir, "the node's key folder (created)")->required();
  gen->add_option("--hub", a->hub, "also allow it on the hub whose key folder this is");
  auto* allow = cmd->add_subcommand("allow", "Allow the peer of PEER_DIR on the hub of HUB_DIR: its public key "
                                             "into HUB_DIR/authorized_keys, the hub's into PEER_DIR/hub.key");
  allow->add_option("HUB_DIR", a->hub, "the hub's key folder")->required();
  allow->add_option("PEER_DIR", a->peer, "the peer's key folder")->required();
  return {cmd, [a, gen] { return gen->parsed() ? run_generate(*a) : run_allow(*a); }};
}

}  // namespace crucible::cli
