// The authenticated bus with real processes on loopback: a hub with CURVE
// keys (`crucible keys`, `--keys`) serves the peers of its allow list and no
// one else. A stranger with a key of its own, or with none, cannot register,
// submit jobs or read events; the allowed ones work as on a plain bus.
#include <doctest/doctest.h>

#include <fstream>
#include <thread>

#include <zmq.hpp>

#include "tests/support/process.hpp"

using namespace crucible::testing;
using namespace std::chrono_literals;

namespace {

struct curve_cluster {
  std::string dir = temp_dir("curve");
  std::string config = dir + "/fast.toml";
  int port = pick_port();
  std::string address = "tcp://127.0.0.1:" + std::to_string(port);
  std::string bin = crucible_binary();

  curve_cluster() {
    std::ofstream(config) << "[hub]\nheartbeat_ms = 100\ndead_after_ms = 800\n"
                             "[bus]\nheartbeat_ms = 100\ndead_after_ms = 800\nretry_ms = 300\n";
  }

  // `crucible keys ARGS...`: its exit status (output in keys.log).
  int keys(const std::vector<std::string>& args) {
    std::vector<std::string> all{"keys"};
    all.insert(all.end(), args.begin(), args.end());
    child c(bin, all, dir + "/keys.log");
    return c.wait(30s);
  }

  std::unique_ptr<child> hub() {
    auto c = std::make_unique<child>(bin, std::vector<std::string>{"hub", "--config", config, "--bind", address,
                                                                   "--ledger", dir + "/ledger", "--keys", dir + "/hub"},
                                     dir + "/hub.log");
    REQUIRE_MESSAGE(wait_for_text(dir + "/hub.log", "hub listening", 30s), read_file(dir + "/hub.log"));
    return c;
  }

  // A worker under name with the key folder keys ("" for none).
  std::unique_ptr<child> worker(const std::string& name, const std::string& keys) {
    std::vector<std::string> args{"worker", "--config", config, "--connect", address, "--name", name};
    if (!keys.empty()) args.insert(args.end(), {"--keys", keys});
    return std::make_unique<child>(bin, args, dir + "/" + name + ".log");
  }

  // `crucible submit` of count echo jobs; its exit status (0 all done, 3 timeout).
  int submit(const std::string& name, const std::string& keys, int count, int timeout_s) {
    std::vector<std::string> args{"submit", "--connect", address, "--name", name, "--count", std::to_string(count),
                                  "--payload", "hi", "--timeout-s", std::to_string(timeout_s), "--json"};
    if (!keys.empty()) args.insert(args.end(), {"--keys", keys});
    child c(bin, args, dir + "/" + name + ".out");
    return c.wait(std::chrono::seconds(timeout_s + 30));
  }

  // A raw SUB on the hub's event port, with the keys of folder (or none).
  std::unique_ptr<zmq::socket_t> subscriber(zmq::context_t& ctx, const std::string& folder) {
    auto s = std::make_unique<zmq::socket_t>(ctx, zmq::socket_type::sub);
    if (!folder.empty()) {
      auto key = [&](const std::string& f) {
        auto text = read_file(folder + "/" + f);
        return text.substr(0, 40);
      };
      s->set(zmq::sockopt::curve_serverkey, key("hub.key"));
      s->set(zmq::sockopt::curve_publickey, key("public.key"));
      s->set(zmq::sockopt::curve_secretkey, key("secret.key"));
    }
    s->set(zmq::sockopt::subscribe, "");
    s->set(zmq::sockopt::linger, 0);
    s->connect("tcp://127.0.0.1:" + std::to_string(port + 2));
    return s;
  }
};

// Messages s receives within timeout.
int events_within(zmq::socket_t& s, std::chrono::milliseconds timeout) {
  int n = 0;
  auto end = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < end) {
    zmq::message_t m;
    if (s.recv(m, zmq::recv_flags::dontwait)) ++n;
    else std::this_thread::sleep_for(10ms);
  }
  return n;
}

}  // namespace

TEST_CASE("a CURVE hub serves the peers of its allow list, and a stranger cannot register, submit or read events") {
  curve_cluster c;
  REQUIRE(c.keys({"generate", c.dir + "/hub"}) == 0);
  REQUIRE(c.keys({"generate", c.dir + "/w", "--hub", c.dir + "/hub"}) == 0);
  REQUIRE(c.keys({"generate", c.dir + "/client", "--hub", c.dir + "/hub"}) == 0);
  // The stranger knows the hub's public key but is not listed.
  REQUIRE(c.keys({"generate", c.dir + "/stranger"}) == 0);
  std::ofstream(c.dir + "/stranger/hub.key") << read_file(c.dir + "/hub/public.key");

  auto hub = c.hub();
  CHECK(count_text(c.dir + "/hub.log", "CURVE, peers of") == 1);
  zmq::context_t ctx;
  auto listed_events = c.subscriber(ctx, c.dir + "/client");
  auto stranger_events = c.subscriber(ctx, c.dir + "/stranger");
  auto plain_events = c.subscriber(ctx, "");
  std::this_thread::sleep_for(500ms);  // the subscriptions reach the hub (or are refused)

  auto w = c.worker("w", c.dir + "/w");
  REQUIRE_MESSAGE(wait_for_text(c.dir + "/w.log", "registered with hub", 15s), read_file(c.dir + "/w.log"));
  CHECK(c.submit("client", c.dir + "/client", 5, 30) == 0);

  // The Python detector (tools/detectors) joins the same way, with pyzmq's CURVE,
  // listed while the hub runs: the hub reads its allow list again.
  REQUIRE(c.keys({"generate", c.dir + "/py", "--hub", c.dir + "/hub"}) == 0);
  child python("/usr/bin/python3",
               {std::string(CRUCIBLE_SOURCE_DIR) + "/tools/detectors/example_detector.py", "--connect", c.address,
                "--name", "plausibility", "--keys", c.dir + "/py", "--schema",
                std::string(CRUCIBLE_BINARY_DIR) + "/generated/python"},
               c.dir + "/py.log");
  CHECK_MESSAGE(wait_for_text(c.dir + "/hub.log", "registered Detector 'plausibility'", 15s), read_file(c.dir + "/py.log"));
  CHECK(count_text(c.dir + "/hub.log", "authorized_keys read again") == 1);
  CHECK(count_text(c.dir + "/hub.log", "registered Referee 'referee'") == 1);  // in the hub's process, its own key

  auto stranger = c.worker("stranger", c.dir + "/stranger");
  auto plain = c.worker("plain", "");
  CHECK(c.submit("stranger-client", c.dir + "/stranger", 1, 4) == 3);  // never accepted: a timeout
  CHECK(c.submit("plain-client", "", 1, 4) == 3);
  CHECK(count_text(c.dir + "/stranger.log", "registered with hub") == 0);
  CHECK(count_text(c.dir + "/plain.log", "registered with hub") == 0);
  CHECK(count_text(c.dir + "/hub.log", "registered Worker 'stranger'") == 0);
  CHECK(count_text(c.dir + "/hub.log", "registered Worker 'plain'") == 0);
  CHECK(count_text(c.dir + "/hub.log", "is not in the allow list") >= 1);
  CHECK(stranger->running());  // refused, not crashed: it keeps trying, as on a hub that is down

  // The listed subscriber saw the worker join; the others saw nothing.
  CHECK(events_within(*listed_events, 1s) >= 1);
  CHECK(events_within(*stranger_events, 1s) == 0);
  CHECK(events_within(*plain_events, 1s) == 0);
}

TEST_CASE("crucible keys refuses to overwrite a key pair, and a bad key file or allow list is an error naming it") {
  curve_cluster c;
  REQUIRE(c.keys({"generate", c.dir + "/hub"}) == 0);
  CHECK(c.keys({"generate", c.dir + "/hub"}) != 0);
  CHECK(read_file(c.dir + "/keys.log").find("already holds a key pair") != std::string::npos);

  // No allow list yet: the hub names the file it needs.
  child missing(c.bin, {"hub", "--config", c.config, "--bind", c.address, "--ledger", c.dir + "/l1", "--keys",
                        c.dir + "/hub"},
                c.dir + "/missing.log");
  CHECK(missing.wait(30s) != 0);
  CHECK(read_file(c.dir + "/missing.log").find(c.dir + "/hub/authorized_keys") != std::string::npos);

  std::ofstream(c.dir + "/hub/authorized_keys") << "# peers\nnot-a-key\n";
  child bad(c.bin, {"hub", "--config", c.config, "--bind", c.address, "--ledger", c.dir + "/l2", "--keys",
                    c.dir + "/hub"},
            c.dir + "/bad.log");
  CHECK(bad.wait(30s) != 0);
  CHECK(read_file(c.dir + "/bad.log").find("authorized_keys line 2") != std::string::npos);

  // A peer folder without the hub's key says how to get it.
  REQUIRE(c.keys({"generate", c.dir + "/w"}) == 0);
  auto w = c.worker("w", c.dir + "/w");
  CHECK(w->wait(30s) != 0);
  CHECK(read_file(c.dir + "/w.log").find("hub.key") != std::string::npos);
}
