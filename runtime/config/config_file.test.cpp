#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include "runtime/config/runtime_options.hpp"

using namespace crucible;

namespace {
// A folder of this process's own: CTest runs this binary's cases as
// processes side by side, and a file name they shared let one case read
// another's config (CI: "max_queued_jobs = -1" accepted).
struct own_folder {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("crucible-config-test-" + std::to_string(::getpid()));
  own_folder() { std::filesystem::create_directories(path); }
  ~own_folder() { std::filesystem::remove_all(path); }
};

std::string write(const std::string& name, const std::string& text) {
  static const own_folder dir;
  auto path = (dir.path / ("crucible-config-" + name + ".toml")).string();
  std::ofstream(path) << text;
  return path;
}
std::string hub_error(const std::string& text) {
  auto f = config::file::load(write("hub", text));
  REQUIRE(f.ok());
  hub::hub_options o;
  auto s = config::read(f->get("hub"), o);
  REQUIRE_FALSE(s.ok());
  return s.error().message;
}
}  // namespace

TEST_CASE("a config maps onto the options struct and keeps defaults for absent keys") {
  auto f = config::file::load(write("ok", "[hub]\nheartbeat_ms = 100\ndead_after_ms = 900\nledger_sync = true\n"));
  REQUIRE(f.ok());
  hub::hub_options o;
  REQUIRE(config::read(f->get("hub"), o).ok());
  CHECK(o.heartbeat.count() == 100);
  CHECK(o.dead_after.count() == 900);
  CHECK(o.ledger_sync);
  CHECK(o.max_queued_jobs == hub::hub_options{}.max_queued_jobs);
}

TEST_CASE("an unknown key is an error naming the file, line and key") {
  auto msg = hub_error("[hub]\nheartbeat_ms = 100\nheartbeat = 5\n");
  CHECK(msg.find("crucible-config-hub.toml:3:") != std::string::npos);
  CHECK(msg.find("unknown key 'heartbeat'") != std::string::npos);
}

TEST_CASE("a wrong type is an error naming the line, key, expected and actual type") {
  auto msg = hub_error("[hub]\n\nheartbeat_ms = \"fast\"\n");
  CHECK(msg.find(":3:") != std::string::npos);
  CHECK(msg.find("[hub] heartbeat_ms: expected an integer, got a string") != std::string::npos);
}

TEST_CASE("a negative count and an inconsistent pair are refused") {
  CHECK(hub_error("[hub]\nmax_queued_jobs = -1\n").find("must not be negative") != std::string::npos);
  CHECK(hub_error("[hub]\nheartbeat_ms = 500\ndead_after_ms = 100\n").find("dead_after_ms") != std::string::npos);
}

TEST_CASE("a missing file and a syntax error are errors naming the file") {
  auto missing = config::file::load("/nonexistent/crucible.toml");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.error().code == errc::not_found);
  CHECK(missing.error().message.find("/nonexistent/crucible.toml") != std::string::npos);
  auto path = write("syntax", "[hub]\nheartbeat_ms = = 3\n");
  auto bad = config::file::load(path);
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message.find(path + ":2:") == 0);
}

TEST_CASE("an unknown section is an error listing the known ones") {
  auto f = config::file::load(write("section", "[hubb]\nx = 1\n"));
  REQUIRE(f.ok());
  auto s = f->check_sections({"log", "hub"});
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("unknown section [hubb] (known: log, hub)") != std::string::npos);
}

TEST_CASE("worker options refuse zero slots and take a list of kinds") {
  auto f = config::file::load(write("worker", "[worker]\nkinds = [\"measure\", \"verify\"]\nslots = 2\n"));
  REQUIRE(f.ok());
  bus::peer_options o;
  REQUIRE(config::read_worker(f->get("worker"), o).ok());
  CHECK(o.job_kinds == std::vector<std::string>{"measure", "verify"});
  auto zero = config::file::load(write("worker0", "[worker]\nslots = 0\n"));
  CHECK_FALSE(config::read_worker(zero->get("worker"), o).ok());
  auto wrong = config::file::load(write("worker1", "[worker]\nkinds = [1, 2]\n"));
  auto s = config::read_worker(wrong->get("worker"), o);
  REQUIRE_FALSE(s.ok());
  CHECK(s.error().message.find("expected an array of strings") != std::string::npos);
}
