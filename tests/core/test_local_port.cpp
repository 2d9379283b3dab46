// Local port checks against real sockets: a port held by a listener, or by a connected socket, is not free; the
// search steps past it and wraps within its range; released, the port is free again.
#include "core/local_port.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace ragmig {
namespace {

// A listener on 127.0.0.1 at a port the kernel chose, held while the object lives.
struct Listener {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  int port = 0;
  Listener() {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd, 4) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
      port = ntohs(addr.sin_port);
  }
  ~Listener() { ::close(fd); }
};

TEST(LocalPort, AListenedPortIsNotFreeAndTheSearchStepsPastIt) {
  Listener held;
  ASSERT_GT(held.port, 0);
  EXPECT_FALSE(local_port_free(held.port));
  EXPECT_FALSE(local_port_free(0));
  EXPECT_FALSE(local_port_free(65536));
  const int lo = held.port - 3 > 1024 ? held.port - 3 : held.port;
  const int next = first_free_local_port(held.port, lo, held.port + 2);
  EXPECT_NE(next, held.port);
  EXPECT_TRUE(next == held.port + 1 || (next >= lo && next < held.port)) << next;  // the next, or wrapped
  EXPECT_EQ(first_free_local_port(held.port, held.port, held.port + 1), held.port) << "none free: the start";
}

TEST(LocalPort, APortAConnectionIsMadeFromIsNotFree) {
  Listener server;
  ASSERT_GT(server.port, 0);
  const int client = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in to{};
  to.sin_family = AF_INET;
  to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  to.sin_port = htons(static_cast<uint16_t>(server.port));
  ASSERT_EQ(::connect(client, reinterpret_cast<sockaddr*>(&to), sizeof to), 0);
  sockaddr_in from{};
  socklen_t len = sizeof from;
  ASSERT_EQ(::getsockname(client, reinterpret_cast<sockaddr*>(&from), &len), 0);
  const int ephemeral = ntohs(from.sin_port);  // what a store drawn at this port would have met
  EXPECT_FALSE(local_port_free(ephemeral));
  ::close(client);
}

TEST(LocalPort, AReleasedPortIsFreeAgain) {
  int released = 0;
  {
    Listener held;
    released = held.port;
    EXPECT_FALSE(local_port_free(released));
  }
  ASSERT_GT(released, 0);
  EXPECT_TRUE(local_port_free(released));
}

}  // namespace
}  // namespace ragmig
