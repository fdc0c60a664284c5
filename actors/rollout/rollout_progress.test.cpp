#include "actors/rollout/rollout_progress.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/process.hpp"

using namespace crucible;
using namespace crucible::rollout;

namespace {
std::string text_of(const std::string& file) {
  std::ifstream in(file);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
}  // namespace

TEST_CASE("a rollout's state file: a fresh start, the number alone, and refused groups to sample again") {
  const std::string dir = testing::temp_dir("rollout-progress");
  const std::string file = dir + "/rollout.state";

  // No file, or an empty one (a crash before the first write): group 0.
  auto fresh = read_progress(file);
  REQUIRE(fresh.ok());
  CHECK(fresh->next == 0);
  CHECK(fresh->resamples.empty());
  std::ofstream(file).close();
  CHECK(read_progress(file)->next == 0);

  // Never refused: the number alone, as files written before refusals were kept.
  REQUIRE(write_progress(file, {7, {}}).ok());
  CHECK(text_of(file) == "7\n");
  CHECK(read_progress(file)->next == 7);

  // Refused groups at or after NEXT are kept; those before it are done with.
  REQUIRE(write_progress(file, {21, {{3, 1}, {21, 2}, {24, 1}}}).ok());
  CHECK(text_of(file) == "21\nresample 21 2\nresample 24 1\n");
  auto back = read_progress(file);
  REQUIRE(back.ok());
  CHECK(back->next == 21);
  CHECK(back->resamples == std::map<std::uint64_t, std::uint32_t>{{21, 2}, {24, 1}});
  CHECK_FALSE(std::filesystem::exists(file + ".tmp"));
}

TEST_CASE("a state file of another form is refused, naming the file and the line") {
  const std::string dir = testing::temp_dir("rollout-progress-bad");
  const std::string file = dir + "/rollout.state";
  for (auto [text, line] : std::vector<std::pair<std::string, std::string>>{{"seven\n", "line 1"},
                                                                            {"7 8\n", "line 1"},
                                                                            {"7\nresample 9\n", "line 2"},
                                                                            {"7\nredo 9 1\n", "line 2"},
                                                                            {"7\nresample 9 1 2\n", "line 2"}}) {
    std::ofstream(file) << text;
    auto p = read_progress(file);
    CAPTURE(text);
    REQUIRE_FALSE(p.ok());
    CHECK(p.error().code == errc::invalid_argument);
    CHECK(p.error().text().find(file + " " + line) != std::string::npos);
  }
  // A folder where the file should be cannot be written: an error, not a crash.
  std::filesystem::create_directories(dir + "/taken.tmp");
  auto w = write_progress(dir + "/taken", {1, {}});
  CHECK_FALSE(w.ok());
  CHECK(w.error().text().find(dir + "/taken") != std::string::npos);
}

TEST_CASE("a group's learner job: its number when first sent, then the resample's count") {
  CHECK(learner_job_id("rollout-0", 21, 0) == "group/rollout-0/g21");
  CHECK(learner_job_id("rollout-0", 21, 1) == "group/rollout-0/g21/r1");
  CHECK(learner_job_id("r", 0, 12) == "group/r/g0/r12");
}
