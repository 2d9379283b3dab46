// Local port checks (see local_port.h): real sockets, closed before returning.
#include "core/local_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.h"

namespace ragmig {
namespace {

// Binds a TCP socket to `address`:`port` (0: the kernel chooses) and, with `listen_too`, listens on it; returns the
// bound port, or -1 with errno set. The socket is closed either way.
int try_bind(uint32_t address, int port, bool reuse, bool listen_too) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  const int on = 1;
  if (reuse) ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(address);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t len = sizeof addr;
  int bound = -1;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && (!listen_too || ::listen(fd, 1) == 0) &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    bound = ntohs(addr.sin_port);
  const int saved = errno;
  ::close(fd);
  errno = saved;
  return bound;
}

}  // namespace

bool local_port_free(int port) {
  return port > 0 && port < 65536 && try_bind(INADDR_ANY, port, true, true) == port;
}

int free_local_port() {
  const int port = try_bind(INADDR_LOOPBACK, 0, false, false);
  if (port < 0) throw IoError(std::string("no free local port: ") + std::strerror(errno));
  return port;
}

int first_free_local_port(int start, int lo, int hi, int tries) {
  RAGMIG_CHECK(lo > 0 && lo < hi && hi <= 65536 && start >= lo && start < hi);
  for (int i = 0; i < tries && i < hi - lo; ++i) {
    const int port = lo + (start - lo + i) % (hi - lo);
    if (local_port_free(port)) return port;
  }
  return start;
}

}  // namespace ragmig
