// The rule in one place; see the header.
#include "core/replica_exit.h"

namespace ragmig {

int combine_replica_exit_codes(const std::vector<int>& codes) {
  bool all_ok = true, bad_input = false, preempted = false, killed = false;
  int other = 0;
  for (int c : codes) {
    all_ok = all_ok && c == 0;
    bad_input = bad_input || c == 2;
    preempted = preempted || c == 75;
    killed = killed || c > 128;
    if (c != 0 && c != 2 && c != 75 && c <= 128 && other == 0) other = c;
  }
  if (all_ok) return 0;
  if (bad_input) return 2;
  if (other != 0) return other;  // a real failure in one replica is the job's failure
  if (preempted || killed) return 75;
  return 1;
}

}  // namespace ragmig
