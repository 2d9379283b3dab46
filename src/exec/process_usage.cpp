// /proc/<pid>/stat: the command name (field 2) may hold spaces and parentheses, so fields are counted
// from the last ')'. Field 6 is the session, 14 and 15 utime and stime in clock ticks.
#include "exec/process_usage.h"

#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace ragmig::exec {

double session_cpu_seconds(pid_t sid) {
  DIR* proc = ::opendir("/proc");
  if (!proc) return -1;
  const double tick = static_cast<double>(::sysconf(_SC_CLK_TCK));
  double total = 0;
  while (const dirent* entry = ::readdir(proc)) {
    if (entry->d_name[0] < '0' || entry->d_name[0] > '9') continue;
    const std::string path = std::string("/proc/") + entry->d_name + "/stat";
    FILE* f = std::fopen(path.c_str(), "r");
    if (!f) continue;  // gone meanwhile
    char buf[1024];
    const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    buf[n] = '\0';
    const char* p = std::strrchr(buf, ')');
    if (!p) continue;
    // After ")": state(3) ppid(4) pgrp(5) session(6) tty(7) tpgid(8) flags(9) minflt..cmajflt(10-13) utime(14) stime(15)
    long fields[13] = {};
    char state = 0;
    if (std::sscanf(p + 1, " %c %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld %ld", &state, &fields[0], &fields[1],
                    &fields[2], &fields[3], &fields[4], &fields[5], &fields[6], &fields[7], &fields[8], &fields[9],
                    &fields[10], &fields[11]) != 13)
      continue;
    if (fields[2] != sid) continue;
    total += static_cast<double>(fields[10] + fields[11]) / tick;
  }
  ::closedir(proc);
  return total;
}

}  // namespace ragmig::exec
