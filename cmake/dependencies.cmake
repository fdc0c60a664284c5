# Finds every dependency (all Debian 12 packages; tools/setup.sh installs them).
# See ../shared/deps.md for why each is found the way it is.

find_package(Threads REQUIRED)

# Torch must come before RocksDB: both bring gflags targets.
if(CRUCIBLE_WITH_TORCH)
  find_package(Torch 1.13 QUIET)
  if(NOT Torch_FOUND)
    # PyTorch wheels (the GPU machines) ship LibTorch under torch's cmake prefix.
    find_package(Torch REQUIRED)
  endif()
endif()

find_package(RocksDB CONFIG REQUIRED)
find_package(FlatBuffers CONFIG REQUIRED)
find_package(cppzmq CONFIG REQUIRED)
find_package(spdlog REQUIRED)
find_package(fmt REQUIRED)
find_package(tomlplusplus REQUIRED)
find_package(nlohmann_json 3 REQUIRED)
find_package(CLI11 QUIET)
# prometheus-cpp-dev: metric types, the registry and the text exposition
# (prometheus-cpp::core); runtime/metrics serves it with cpp-httplib, not
# with its civetweb Exposer (../shared/deps.md).
find_package(prometheus-cpp CONFIG REQUIRED)
# Debian builds cpp-httplib as a shared library (libcpp-httplib-dev) with a
# .pc file and no CMake config.
find_library(CPP_HTTPLIB_LIBRARY cpp-httplib REQUIRED)
find_path(CPP_HTTPLIB_INCLUDE_DIR httplib.h REQUIRED)
add_library(httplib::httplib SHARED IMPORTED)
set_target_properties(httplib::httplib PROPERTIES
  IMPORTED_LOCATION ${CPP_HTTPLIB_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${CPP_HTTPLIB_INCLUDE_DIR})

# CAF 0.17 ships neither a CMake config nor a .pc file.
find_path(CAF_INCLUDE_DIR caf/all.hpp REQUIRED)
find_library(CAF_CORE_LIBRARY caf_core REQUIRED)
find_library(CAF_IO_LIBRARY caf_io REQUIRED)
add_library(caf::core SHARED IMPORTED)
set_target_properties(caf::core PROPERTIES
  IMPORTED_LOCATION ${CAF_CORE_LIBRARY}
  INTERFACE_INCLUDE_DIRECTORIES ${CAF_INCLUDE_DIR}
  INTERFACE_LINK_LIBRARIES Threads::Threads)
add_library(caf::io SHARED IMPORTED)
set_target_properties(caf::io PROPERTIES
  IMPORTED_LOCATION ${CAF_IO_LIBRARY}
  INTERFACE_LINK_LIBRARIES caf::core)

find_path(CLI11_INCLUDE_DIR CLI/CLI.hpp REQUIRED)
if(NOT TARGET CLI11::CLI11)
  add_library(CLI11::CLI11 INTERFACE IMPORTED)
  set_target_properties(CLI11::CLI11 PROPERTIES INTERFACE_INCLUDE_DIRECTORIES ${CLI11_INCLUDE_DIR})
endif()

find_program(FLATC flatc REQUIRED)
find_program(CRUCIBLE_PYTHON NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH REQUIRED)
