# Test helpers: doctest binaries discovered by CTest.
find_package(doctest REQUIRED)
include(doctest)

# crucible_test(NAME [SERIAL] [TIMEOUT S] SOURCES... LIBS ...): one doctest binary. A
# filter that matches nothing must fail (doctest exits 0 then; see
# ../shared/deps.md). SERIAL: its tests run with no other test beside them
# (they time things, and a parallel test on a 2-core machine would be noise).
# TIMEOUT: seconds per test case, above tools/test.sh's default of 900.
function(crucible_test name)
  cmake_parse_arguments(T "SERIAL" "TIMEOUT" "SOURCES;LIBS" ${ARGN})
  # doctest_discover_tests splits a test name at ';' into two CTest tests
  # that match nothing: refuse such names here rather than fail in CI.
  foreach(src IN LISTS T_SOURCES)
    if(NOT IS_ABSOLUTE ${src})
      set(src ${CMAKE_CURRENT_SOURCE_DIR}/${src})
    endif()
    file(STRINGS ${src} bad REGEX "TEST_CASE\\(\"[^\"]*[;]")
    if(bad)
      message(FATAL_ERROR "${src}: a TEST_CASE name contains ';', which CTest splits into two tests; use ','")
    endif()
  endforeach()
  add_executable(${name} ${CMAKE_SOURCE_DIR}/tests/doctest_main.cpp ${T_SOURCES})
  target_link_libraries(${name} PRIVATE doctest::doctest ${T_LIBS} crucible_base)
  target_compile_definitions(${name} PRIVATE
    CRUCIBLE_SOURCE_DIR="${CMAKE_SOURCE_DIR}"
    CRUCIBLE_BINARY_DIR="${CMAKE_BINARY_DIR}")
  set(serial FALSE)
  if(T_SERIAL)
    set(serial TRUE)
  endif()
  set(timeout)
  if(T_TIMEOUT)
    set(timeout TIMEOUT ${T_TIMEOUT})
  endif()
  doctest_discover_tests(${name}
    PROPERTIES FAIL_REGULAR_EXPRESSION "test cases: +0 +[|]" RUN_SERIAL ${serial} ${timeout})
endfunction()
