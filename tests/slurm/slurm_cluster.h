// A real Slurm for the tests of the Slurm backend (Debian's slurmctld, slurmd and munge, as
// ../shared/BUILD-NOTES.md describes): its own munged, controller and node daemon in a scratch folder, on free
// ports, with a fake MIG GRES (device files made with mknod, Type=1g.18gb Count=7) and 2 CPUs; SLURM_CONF is
// set for this process and everything it starts. Torn down (daemons killed) when it goes. With two nodes, a
// second node daemon (slurmd -N) on this host serves a node "<host>b" with its own port; each node then has
// 1 CPU, so a job of two tasks spans both.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/atomic_file.h"
#include "core/error.h"
#include "support/process.h"
#include "support/test_support.h"

namespace ragmig::testing {

/// The program's path in PATH or /usr/sbin (daemons), or "" when it is not installed.
inline std::string find_program(const std::string& name) {
  std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  path += ":/usr/sbin:/sbin";
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find(':', start), path.size());
    const std::filesystem::path candidate = std::filesystem::path(path.substr(start, end - start)) / name;
    if (end > start && ::access(candidate.c_str(), X_OK) == 0) return candidate.string();
    start = end + 1;
  }
  return "";
}

/// A TCP port nobody listens on now.
inline int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

class SlurmCluster {
 public:
  /// Why this machine cannot run one ("" when it can): the daemons are installed by scripts/install-deps.sh,
  /// and mknod and SlurmdUser=root need root.
  static std::string unavailable() {
    for (const char* p : {"slurmctld", "slurmd", "munged", "sbatch", "squeue", "scancel", "sinfo"})
      if (find_program(p).empty()) return std::string(p) + " is not installed (scripts/install-deps.sh installs it)";
    if (::geteuid() != 0) return "needs root (device files for the fake GRES, slurmd as root)";
    return "";
  }

  explicit SlurmCluster(int nodes = 1) {
    RAGMIG_CHECK(nodes == 1 || nodes == 2);
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    host_ = std::string(host).substr(0, std::string(host).find('.'));
    const auto& d = dir_.path();
    nodes_ = {host_};
    if (nodes == 2) nodes_.push_back(host_ + "b");
    std::string node_lines;
    for (const auto& name : nodes_)
      node_lines += fmt::format("NodeName={} NodeAddr=127.0.0.1 Port={} CPUs={} RealMemory=4000{} State=UNKNOWN\n", name,
                                free_port(), nodes == 1 ? 2 : 1, name == host_ ? " Gres=gpu:1g.18gb:7" : "");
    for (const char* sub : {"munge", "state", "spool", "log", "dev"}) std::filesystem::create_directories(d / sub);
    std::string key(1024, '\0');
    for (size_t i = 0; i < key.size(); ++i) key[i] = static_cast<char>((i * 2654435761u) >> 13);
    write_file_atomic(d / "munge/munge.key", key);
    ::chmod((d / "munge/munge.key").c_str(), 0400);
    ::chmod((d / "munge").c_str(), 0711);  // munged wants its socket's folder world-executable
    ::chmod(d.c_str(), 0755);
    for (int i = 0; i < 7; ++i)
      ::mknod((d / fmt::format("dev/nvidia{}", i)).c_str(), S_IFCHR | 0666, makedev(195, i));
    write_file_atomic(d / "slurm.conf", fmt::format(R"(ClusterName=ragmigtest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld}
SlurmdPort={slurmd}
AuthType=auth/munge
AuthInfo=socket={d}/munge/socket,cred_expire=5
CredType=cred/munge
SlurmUser=root
SlurmdUser=root
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool/%n
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd-%n.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
MpiDefault=none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
MinJobAge=300
DefMemPerCPU=100
{nodes}PartitionName=debug Nodes={names} Default=YES MaxTime=INFINITE State=UP
)",
                                                    fmt::arg("host", host_), fmt::arg("ctld", free_port()),
                                                    fmt::arg("slurmd", free_port()), fmt::arg("d", d.string()),
                                                    fmt::arg("nodes", node_lines), fmt::arg("names", fmt::join(nodes_, ","))));
    write_file_atomic(d / "gres.conf",
                      fmt::format("NodeName={} Name=gpu Type=1g.18gb File={}/dev/nvidia[0-6]\n", host_, d.string()));
    ::setenv("SLURM_CONF", (d / "slurm.conf").c_str(), 1);
    const auto munge = run_process({find_program("munged"), "--force", "--socket=" + (d / "munge/socket").string(),
                                    "--key-file=" + (d / "munge/munge.key").string(),
                                    "--log-file=" + (d / "log/munged.log").string(),
                                    "--pid-file=" + (d / "munge/munged.pid").string(),
                                    "--seed-file=" + (d / "munge/seed").string()});
    if (munge.exit_code != 0) throw std::runtime_error("munged: " + munge.output);
    start_daemons();
  }

  ~SlurmCluster() {
    stop_daemons();
    try {
      const auto pid = std::stoi(read_file(dir_.path() / "munge/munged.pid"));
      ::kill(pid, SIGTERM);
    } catch (const std::exception&) {
    }
  }

  /// The controller and the node daemon, started and waited for until the node is idle (or throws).
  void start_daemons() {
    const auto& d = dir_.path();
    ctld_ = std::make_unique<BackgroundProcess>(std::vector<std::string>{find_program("slurmctld"), "-D", "-i"},
                                                (d / "log/slurmctld.out").string());
    for (const auto& name : nodes_)
      slurmd_.push_back(std::make_unique<BackgroundProcess>(
          std::vector<std::string>{find_program("slurmd"), "-D", "-N", name}, (d / "log" / (name + ".out")).string()));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline) {
      const auto r = run_process({find_program("sinfo"), "-h", "-N", "-o", "%T"});
      size_t idle = 0;
      for (size_t at = r.output.find("idle"); at != std::string::npos; at = r.output.find("idle", at + 1)) ++idle;
      if (r.exit_code == 0 && idle == nodes_.size()) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    throw std::runtime_error("Slurm did not come up: " + read_file(d / "log/slurmctld.log"));
  }

  /// Both daemons gone (SIGTERM; jobs keep running under their slurmstepd).
  void stop_daemons() {
    for (auto& p : slurmd_) {
      p->signal(SIGTERM);
      p->wait();
    }
    slurmd_.clear();
    if (ctld_) {
      ctld_->signal(SIGTERM);
      ctld_->wait();
      ctld_.reset();
    }
  }

  const std::filesystem::path& dir() const { return dir_.path(); }
  const std::string& host() const { return host_; }

 private:
  ScratchDir dir_;
  std::string host_;
  std::vector<std::string> nodes_;  ///< host_ first
  std::unique_ptr<BackgroundProcess> ctld_;
  std::vector<std::unique_ptr<BackgroundProcess>> slurmd_;
};

}  // namespace ragmig::testing
