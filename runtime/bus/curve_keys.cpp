#include "runtime/bus/curve_keys.hpp"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <zmq.h>

namespace crucible::bus {

namespace fs = std::filesystem;

namespace {

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return {};
  auto e = s.find_last_not_of(" \t\r\n");
  return s.substr(b, e - b + 1);
}

// The one key of a key file: its first line that is not blank or a comment.
result<std::string> read_key_file(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return make_error(errc::not_found, "cannot read key file " + path.string());
  std::string line;
  while (std::getline(in, line)) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    CRUCIBLE_TRY(decode_key(line, path.string()));
    return line;
  }
  return make_error(errc::invalid_argument, "key file " + path.string() + " holds no key");
}

status write_file(const fs::path& path, const std::string& text, mode_t mode) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return make_error(errc::io, "cannot write " + path.string());
  if (::chmod(path.c_str(), mode) != 0) return make_error(errc::io, "cannot chmod " + path.string());
  return {};
}

result<curve_keys> load_pair(const fs::path& dir) {
  curve_keys k;
  auto pub = read_key_file(dir / "public.key");
  if (!pub) return pub.error();
  auto sec = read_key_file(dir / "secret.key");
  if (!sec) return sec.error();
  k.public_key = *pub;
  k.secret_key = *sec;
  // The pair must belong together: a secret key derives its public key.
  char derived[41];
  if (zmq_curve_public(derived, k.secret_key.c_str()) != 0 || k.public_key != derived)
    return make_error(errc::invalid_argument, (dir / "secret.key").string() + " is not the secret key of " +
                                                  (dir / "public.key").string());
  return k;
}

}  // namespace

result<std::string> decode_key(const std::string& z85, const std::string& where) {
  if (z85.size() != 40)
    return make_error(errc::invalid_argument,
                      where + ": a CURVE key is 40 Z85 characters, this is " + std::to_string(z85.size()));
  std::string raw(32, '\0');
  if (!zmq_z85_decode(reinterpret_cast<std::uint8_t*>(raw.data()), z85.c_str()))
    return make_error(errc::invalid_argument, where + ": '" + z85 + "' is not Z85");
  return raw;
}

result<curve_keys> load_peer_keys(const std::string& dir) {
  auto k = load_pair(dir);
  if (!k) return k;
  fs::path hub = fs::path(dir) / "hub.key";
  if (fs::exists(hub)) {
    auto server = read_key_file(hub);
    if (!server) return server.error();
    k->server_key = *server;
  } else if (fs::exists(fs::path(dir) / "authorized_keys")) {
    k->server_key = k->public_key;  // the hub's own folder: a role in the hub's process
  } else {
    return make_error(errc::not_found, "cannot read " + hub.string() +
                                           ": the hub's public key (crucible keys allow HUB_DIR " + dir + ")");
  }
  return k;
}

result<hub_keys> load_hub_keys(const std::string& dir) {
  auto own = load_pair(dir);
  if (!own) return own.error();
  hub_keys h;
  h.own = *own;
  h.own.server_key = own->public_key;
  h.allowed.insert(*decode_key(own->public_key, dir));
  fs::path list = fs::path(dir) / "authorized_keys";
  std::ifstream in(list);
  if (!in) return make_error(errc::not_found, "cannot read the allow list " + list.string() +
                                                  " (public keys of the peers this hub accepts, one a line)");
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    auto raw = decode_key(line.substr(0, line.find_first_of(" \t")), list.string() + " line " + std::to_string(n));
    if (!raw) return raw.error();
    h.allowed.insert(*raw);
  }
  return h;
}

result<std::string> generate_keys(const std::string& dir) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return make_error(errc::io, "cannot create " + dir + ": " + ec.message());
  if (fs::exists(fs::path(dir) / "secret.key"))
    return make_error(errc::invalid_argument, dir + " already holds a key pair (secret.key); remove it first");
  char pub[41], sec[41];
  if (zmq_curve_keypair(pub, sec) != 0)
    return make_error(errc::unavailable, "this libzmq cannot make CURVE keys (built without libsodium?)");
  CRUCIBLE_TRY(write_file(fs::path(dir) / "secret.key", std::string(sec) + "\n", 0600));
  CRUCIBLE_TRY(write_file(fs::path(dir) / "public.key", std::string(pub) + "\n", 0644));
  return std::string(pub);
}

status allow_peer(const std::string& hub_dir, const std::string& peer_dir) {
  auto hub = load_pair(hub_dir);
  if (!hub) return hub.error();
  auto peer = load_pair(peer_dir);
  if (!peer) return peer.error();
  fs::path list = fs::path(hub_dir) / "authorized_keys";
  std::ofstream out(list, std::ios::app);
  out << peer->public_key << " " << fs::absolute(peer_dir).string() << "\n";
  out.close();
  if (!out) return make_error(errc::io, "cannot append to " + list.string());
  return write_file(fs::path(peer_dir) / "hub.key", hub->public_key + "\n", 0644);
}

}  // namespace crucible::bus
