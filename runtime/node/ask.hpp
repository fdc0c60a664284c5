// Asks an actor from a thread that must not block (a job handler's run(),
// called on a worker actor's thread) and calls back with the reply: a
// one-shot event-based actor makes the request and quits when it is answered.
// on_reply and on_error run on that actor's thread.
#pragma once

#include <utility>

#include <caf/all.hpp>

namespace crucible::node {

template <class Reply, class Handle, class OnReply, class OnError, class... Ts>
void ask(caf::actor_system& sys, Handle target, OnReply on_reply, OnError on_error, Ts... request) {
  sys.spawn([=](caf::event_based_actor* self) {
    self->request(target, caf::infinite, request...)
        .then(
            [=](Reply& reply) {
              on_reply(reply);
              self->quit();
            },
            [=](caf::error& e) {
              on_error(e);
              self->quit();
            });
  });
}

}  // namespace crucible::node
