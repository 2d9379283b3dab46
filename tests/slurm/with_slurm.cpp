// A throwaway one-node Slurm for one command: `with_slurm -- <command> [args...]` starts munged, slurmctld and
// slurmd in a scratch folder (slurm_cluster.h, the tests' own cluster: 2 CPUs, a fake 1g.18gb GRES), runs the
// command with SLURM_CONF set, and tears the cluster down; exits with the command's code. For benchmarks and
// checks by hand of --backend slurm, e.g. bench/slurm/sweep_local_vs_slurm.sh. Needs root, as the tests do.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <exception>

#include "slurm_cluster.h"

int main(int argc, char** argv) {
  if (argc < 3 || std::strcmp(argv[1], "--") != 0) {
    std::fprintf(stderr, "usage: with_slurm -- <command> [args...]\n");
    return 2;
  }
  const std::string why = ragmig::testing::SlurmCluster::unavailable();
  if (!why.empty()) {
    std::fprintf(stderr, "with_slurm: cannot start a Slurm here: %s\n", why.c_str());
    return 2;
  }
  try {
    ragmig::testing::SlurmCluster cluster;  // sets SLURM_CONF for what we start
    std::fprintf(stderr, "with_slurm: Slurm up (SLURM_CONF=%s)\n", std::getenv("SLURM_CONF"));
    const pid_t pid = ::fork();
    if (pid == 0) {
      ::execvp(argv[2], argv + 2);
      std::fprintf(stderr, "with_slurm: cannot run %s: %s\n", argv[2], std::strerror(errno));
      ::_exit(127);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    ::system("scancel --user=root >/dev/null 2>&1");  // nothing outlives the cluster
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "with_slurm: %s\n", e.what());
    return 1;
  }
}
