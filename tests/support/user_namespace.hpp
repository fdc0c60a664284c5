// Entering a user namespace of the test's own, where the test process is
// root (its uid and gid mapped to 0) and may create the other namespaces it
// asks for with it, as `unshare --user --map-root-user` does. Used by
// small_fs (a tmpfs of the test's own) and multinode_hosts (test hosts).
//
// Who calls it: a test case, on its main thread, before it starts any
// thread (the kernel lets only a single-threaded process enter a user
// namespace; ctest runs each test case as its own process). Not thread-safe.
#pragma once

#include <string>

namespace crucible::testing {

// unshare(CLONE_NEWUSER | more), then this process's uid_map, gid_map and
// setgroups. `what` names the flags in messages ("CLONE_NEWUSER |
// CLONE_NEWNS"). False with why set to what the kernel refused.
bool enter_user_namespace(int more, const std::string& what, std::string& why);

}  // namespace crucible::testing
