// Data-parallel plumbing: where a replica learns its rank and its rendezvous (torchrun or Slurm variables,
// parsed by pure functions), and the communicator over LibTorch's c10d (Gloo through host memory, which
// works between MIG instances and on CPU; NCCL where the LibTorch has it). c10d headers stay in the .cpp.
#pragma once

#include <torch/torch.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"

namespace ragmig::train {

/// A collective failed: a replica is gone (its connection closed) or silent past the timeout. The trainer
/// turns it into the Preempted outcome, so the scheduler requeues the whole job.
class PeerLost : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

struct Rendezvous {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;  ///< host of rank 0's TCPStore
  int master_port = 0;
  std::string source;       ///< "env" (RANK/WORLD_SIZE) or "slurm" (SLURM_PROCID/SLURM_NTASKS)
  bool operator==(const Rendezvous&) const = default;
};

/// An environment look-up: the value of a variable or nullopt when unset (a pure function's input).
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
EnvLookup process_env();

/// The rendezvous a worker finds in its environment: RANK + WORLD_SIZE (+ MASTER_ADDR, MASTER_PORT,
/// LOCAL_RANK) first, else SLURM_PROCID + SLURM_NTASKS with the first host of SLURM_STEP_NODELIST or
/// SLURM_JOB_NODELIST (MASTER_ADDR/MASTER_PORT still win when set; the port defaults to one derived from
/// SLURM_JOB_ID). nullopt when neither is set. Throws ConfigError naming the variable when a value is bad.
std::optional<Rendezvous> rendezvous_from_env(const EnvLookup& env);

/// The first host of a Slurm node list: "gpu[03-05,9],cpu1" -> "gpu03", "a,b" -> "a", "n[1-2]-ib[7]" -> "n1-ib7".
/// Throws ConfigError on an unbalanced bracket or an empty list.
std::string first_slurm_host(const std::string& nodelist);

/// A process group of `world_size` replicas. Collectives throw DeviceError when a peer is gone or the
/// bounded timeout passes, so a dead replica turns into an error on every other one instead of a hang.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string backend() const = 0;
  /// Why that backend (shown in the run's start event).
  virtual std::string backend_reason() const = 0;
  /// In-place element-wise sum over replicas of one tensor (any device; staged through host for Gloo).
  virtual void all_reduce_sum(torch::Tensor& t) = 0;
  /// Every replica's `t` (same shape and dtype everywhere), in rank order.
  virtual std::vector<torch::Tensor> all_gather(const torch::Tensor& t) = 0;
  /// Copies rank `root`'s `t` into every replica's `t`.
  virtual void broadcast(torch::Tensor& t, int root) = 0;
  virtual void barrier() = 0;
};

struct ConnectOptions {
  std::string backend = "auto";            ///< auto | gloo | nccl
  std::chrono::milliseconds timeout{120000};
  bool cuda_tensors = false;               ///< the model lives on a GPU (auto picks NCCL only then)
  int cuda_device = 0;                     ///< its CUDA device index in this process
};

/// The GPU a rank computes on, as the ranks tell each other at the rendezvous.
struct RankGpu {
  std::string physical;  ///< host and PCI bus id of the physical GPU (MIG instances share their GPU's)
  bool mig = false;      ///< a MIG instance (CUDA_VISIBLE_DEVICES=MIG-...)
  bool operator==(const RankGpu&) const = default;
};

struct BackendChoice {
  std::string backend;  ///< gloo | nccl
  std::string reason;
};

/// The process group for `requested` (auto | gloo | nccl), a pure function. NCCL only between distinct
/// whole GPUs and only where this LibTorch has it: CPU models, MIG instances (no peer-to-peer path) and
/// ranks sharing one physical GPU (NCCL refuses two ranks on one device) get Gloo, also when NCCL was asked
/// for, with the reason. `gpus` holds one entry per rank (empty unless the model is on a GPU). Throws
/// DeviceError for nccl asked of a LibTorch without it, ConfigError for an unknown name.
BackendChoice choose_backend(const std::string& requested, bool cuda_tensors, bool nccl_built,
                             const std::vector<RankGpu>& gpus);

/// Joins the rendezvous (rank 0 hosts the TCPStore) and builds the process group. Throws DeviceError.
std::unique_ptr<Communicator> connect(const Rendezvous& rv, const ConnectOptions& opts);

/// Rows [0, sizes[r]) of every replica's `local` ([sizes[rank], ...] here; shapes equal past dim 0), in rank
/// order. Rows are padded to the largest size for the collective and cut back, so replicas may differ.
std::vector<torch::Tensor> all_gather_rows(Communicator& comm, const torch::Tensor& local,
                                           const std::vector<int64_t>& sizes);

}  // namespace ragmig::train
