// TCP ports on this machine for a gang's rendezvous (c10d's TCPStore on rank 0): whether one can be listened on
// now, and the first such from a chosen start. A check, not a reservation: the port is released at once, and
// another process may take it before the store binds it (rare; the rendezvous then fails and names the port).
#pragma once

namespace ragmig {

/// The ports gangs meet on: below Linux's default ephemeral range (32768-60999), which the kernel hands to
/// outgoing connections and to listeners on port 0 (Gloo's pairs, HTTP servers). A port drawn inside it can be
/// held by any of them: a gang's store then fails with EADDRINUSE (seen under load when ports were drawn in 29500-49499).
inline constexpr int kRendezvousPortLo = 20000, kRendezvousPortHi = 32768;

/// Whether a listener could bind `port` on every local address now — bind and listen with SO_REUSEADDR, as
/// TCPStore does — and then closes it. False for a port another socket holds, listening or connected from it.
bool local_port_free(int port);

/// The first port from `start` on, wrapping within [lo, hi), that local_port_free() finds free, trying at most
/// `tries`; `start` itself when none is (the rendezvous will say which port was in use).
int first_free_local_port(int start, int lo, int hi, int tries = 64);

}  // namespace ragmig
