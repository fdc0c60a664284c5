// The bus's CURVE keys (ZeroMQ's CurveZMQ, libsodium): what `crucible keys
// generate DIR` writes and what `--keys DIR` / `[bus] keys` reads. A key
// folder holds
//   public.key       this node's public key (Z85, 40 characters)
//   secret.key       its secret key (mode 0600)
//   hub.key          a peer's: the hub's public key (a hub's own folder has
//                    none: its public.key is the hub's)
//   authorized_keys  the hub's: the public keys of the peers it accepts, one
//                    per line ('#' starts a comment); its own is accepted too,
//                    for the roles it hosts in its process.
// Read by zmq_transport.cpp; written by runtime/cli/keys_command.cpp.
#pragma once

#include <set>
#include <string>

#include "runtime/base/result.hpp"

namespace crucible::bus {

struct curve_keys {
  std::string public_key;  // Z85
  std::string secret_key;  // Z85
  std::string server_key;  // Z85: the hub's public key (a peer connects to it)
};

// A peer's keys from dir. Errors name the file and what is wrong with it.
result<curve_keys> load_peer_keys(const std::string& dir);

// The hub's keys and its allow list (binary 32-byte keys) from dir.
struct hub_keys {
  curve_keys own;
  std::set<std::string> allowed;  // 32-byte binary public keys
};
result<hub_keys> load_hub_keys(const std::string& dir);

// Writes a fresh key pair into dir (created); returns the public key. Refuses
// to overwrite a folder that already holds one.
result<std::string> generate_keys(const std::string& dir);

// Lets the peer whose keys are in peer_dir join the hub whose keys are in
// hub_dir: its public key appended to hub_dir/authorized_keys, the hub's
// public key written to peer_dir/hub.key. For a shared file system; the same
// by hand is two copies.
status allow_peer(const std::string& hub_dir, const std::string& peer_dir);

// 40 Z85 characters -> 32 bytes; an error naming `where` otherwise.
result<std::string> decode_key(const std::string& z85, const std::string& where);

}  // namespace crucible::bus
