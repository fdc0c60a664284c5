// temp_dir (process.hpp) and what removes its folders: a test binary's
// folders under /tmp are removed when its run ends with no failed test case,
// and kept, for reading, when one failed (a run of the whole suite left
// several GB behind each time before). CRUCIBLE_KEEP_TEST_DIRS=1 keeps them
// always. Linked into every test binary that calls temp_dir, which pulls in
// the listener below.
#include <doctest/doctest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/base/remove_tree.hpp"
#include "tests/support/process.hpp"

namespace crucible::testing {
namespace {

std::mutex made_mutex;
std::vector<std::filesystem::path> made;  // every folder temp_dir made in this process

// A doctest listener: only test_run_end does anything.
struct remove_temp_dirs : doctest::IReporter {
  explicit remove_temp_dirs(const doctest::ContextOptions&) {}
  void report_query(const doctest::QueryData&) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    const char* keep = std::getenv("CRUCIBLE_KEEP_TEST_DIRS");
    if (stats.numTestCasesFailed > 0 || stats.numAssertsFailed > 0 || (keep && std::string(keep) == "1")) return;
    std::lock_guard lock(made_mutex);
    for (const auto& dir : made) remove_tree(dir);
    made.clear();
  }
  void test_case_start(const doctest::TestCaseData&) override {}
  void test_case_reenter(const doctest::TestCaseData&) override {}
  void test_case_end(const doctest::CurrentTestCaseStats&) override {}
  void test_case_exception(const doctest::TestCaseException&) override {}
  void subcase_start(const doctest::SubcaseSignature&) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData&) override {}
  void log_message(const doctest::MessageData&) override {}
  void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("remove_temp_dirs", 1, remove_temp_dirs);

}  // namespace

std::string temp_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("crucible-test-" + name + "-" + std::to_string(::getpid()));
  remove_tree(dir);  // runtime/base/remove_tree.hpp says why not remove_all
  std::filesystem::create_directories(dir);
  std::lock_guard lock(made_mutex);
  made.push_back(dir);
  return dir.string();
}

}  // namespace crucible::testing
