// A test seam for the judge: a real OpenAI-compatible chat endpoint
// (httplib::Server on a free loopback port, its own thread) that records
// each request and answers with a configured reply, HTTP status or delay.
// Used by judge_detector.test.cpp and detector_process.test.cpp.
#pragma once

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <doctest/doctest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

namespace crucible::detector::testing {

// A chat endpoint that records each request and answers with reply (or an
// HTTP status, or after a delay).
class fake_endpoint {
 public:
  fake_endpoint() {
    server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
      std::string reply;
      int status;
      int delay_ms;
      {
        std::lock_guard lock(mu_);
        bodies_.push_back(req.body);
        authorization_ = req.get_header_value("Authorization");
        reply = reply_;
        status = status_;
        delay_ms = delay_ms_;
      }
      if (delay_ms) std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
      res.status = status;
      nlohmann::json body{{"id", "x"}, {"object", "chat.completion"},
                {"choices", nlohmann::json::array({{{"index", 0}, {"message", {{"role", "assistant"}, {"content", reply}}}}})}};
      res.set_content(status == 200 ? body.dump() : std::string("server error"), "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    REQUIRE(port_ > 0);
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() does nothing to a server whose accept loop has not started yet.
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~fake_endpoint() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  void answer(std::string reply, int status = 200, int delay_ms = 0) {
    std::lock_guard lock(mu_);
    reply_ = std::move(reply);
    status_ = status;
    delay_ms_ = delay_ms;
  }
  std::vector<std::string> bodies() {
    std::lock_guard lock(mu_);
    return bodies_;
  }
  std::string authorization() {
    std::lock_guard lock(mu_);
    return authorization_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  std::mutex mu_;
  std::vector<std::string> bodies_;
  std::string authorization_, reply_ = "VERDICT: clean";
  int status_ = 200, delay_ms_ = 0;
};

}  // namespace crucible::detector::testing
