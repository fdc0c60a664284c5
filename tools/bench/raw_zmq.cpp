// crucible-bench-raw: the peer that tools/bench_bus.sh measures the hub
// against. Plain ZeroMQ ROUTER/DEALER with the same hops as a job through the
// hub (client -> broker -> worker -> broker -> client) and nothing else: no
// verification, no ledger, no credit, no actors.
//   crucible-bench-raw broker --bind tcp://127.0.0.1:P     (clients on P, workers on P+1)
//   crucible-bench-raw worker --connect tcp://127.0.0.1:P
//   crucible-bench-raw client --connect tcp://127.0.0.1:P --count N --payload-bytes B --in-flight K
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <zmq.hpp>

namespace {

std::string plus_one(const std::string& address) {
  auto colon = address.rfind(':');
  return address.substr(0, colon + 1) + std::to_string(std::stoi(address.substr(colon + 1)) + 1);
}

int broker(const std::string& bind) {
  zmq::context_t ctx(1);
  zmq::socket_t front(ctx, zmq::socket_type::router), back(ctx, zmq::socket_type::dealer);
  front.set(zmq::sockopt::sndhwm, 100000);
  front.set(zmq::sockopt::rcvhwm, 100000);
  back.set(zmq::sockopt::sndhwm, 100000);
  back.set(zmq::sockopt::rcvhwm, 100000);
  front.bind(bind);
  back.bind(plus_one(bind));
  zmq::proxy(front, back);
  return 0;
}

int worker(const std::string& connect) {
  zmq::context_t ctx(1);
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.connect(plus_one(connect));
  while (true) {  // echo every multipart message back as it came
    std::vector<zmq::message_t> parts;
    do {
      zmq::message_t m;
      if (!s.recv(m)) return 1;
      parts.push_back(std::move(m));
    } while (parts.back().more());
    for (std::size_t i = 0; i < parts.size(); ++i)
      s.send(parts[i], i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }
}

int client(const std::string& connect, std::size_t count, std::size_t bytes, std::size_t in_flight) {
  using clock = std::chrono::steady_clock;
  zmq::context_t ctx(1);
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::sndhwm, 100000);
  s.set(zmq::sockopt::rcvhwm, 100000);
  s.connect(connect);
  std::vector<std::uint8_t> payload(std::max<std::size_t>(bytes, sizeof(std::uint64_t)), 0x5a);
  std::vector<clock::time_point> sent(count);
  std::vector<double> latency;
  latency.reserve(count);
  std::size_t next = 0, done = 0;
  auto start = clock::now();
  while (done < count) {
    while (next < count && next - done < in_flight) {
      std::uint64_t id = next;
      std::memcpy(payload.data(), &id, sizeof id);
      sent[next++] = clock::now();
      s.send(zmq::buffer(payload), zmq::send_flags::none);
    }
    zmq::message_t m;
    if (!s.recv(m)) return 1;
    std::uint64_t id;
    std::memcpy(&id, m.data(), sizeof id);
    latency.push_back(std::chrono::duration<double, std::micro>(clock::now() - sent[id]).count());
    ++done;
  }
  double elapsed = std::chrono::duration<double>(clock::now() - start).count();
  auto pct = [&](double p) {
    auto k = static_cast<std::size_t>(p * static_cast<double>(latency.size() - 1));
    std::nth_element(latency.begin(), latency.begin() + static_cast<long>(k), latency.end());
    return latency[k];
  };
  double p50 = pct(0.5), p99 = pct(0.99);
  std::printf("{\"completed\":%zu,\"elapsed_s\":%.6f,\"jobs_per_s\":%.1f,\"p50_us\":%.1f,\"p99_us\":%.1f}\n", done,
              elapsed, static_cast<double>(done) / elapsed, p50, p99);
  return 0;
}

std::string arg(int argc, char** argv, const char* name, const char* fallback) {
  for (int i = 2; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return fallback;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: crucible-bench-raw broker|worker|client [--bind|--connect ADDR] ...\n");
    return 2;
  }
  std::string mode = argv[1];
  if (mode == "broker") return broker(arg(argc, argv, "--bind", "tcp://127.0.0.1:7100"));
  if (mode == "worker") return worker(arg(argc, argv, "--connect", "tcp://127.0.0.1:7100"));
  if (mode == "client")
    return client(arg(argc, argv, "--connect", "tcp://127.0.0.1:7100"),
                  std::stoul(arg(argc, argv, "--count", "10000")), std::stoul(arg(argc, argv, "--payload-bytes", "1024")),
                  std::stoul(arg(argc, argv, "--in-flight", "256")));
  std::fprintf(stderr, "crucible-bench-raw: unknown mode '%s'\n", mode.c_str());
  return 2;
}
