// Local port checks (see local_port.h): real sockets, closed before returning.
#include "core/local_port.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/error.h"

namespace ragmig {

bool local_port_free(int port) {
  if (port <= 0 || port >= 65536) return false;
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  const int on = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool free = ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 && ::listen(fd, 1) == 0;
  ::close(fd);
  return free;
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
