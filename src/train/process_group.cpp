// Rendezvous parsing (pure) and the c10d communicator. The only file of ragmig that includes c10d headers:
// they are heavy, and their paths and APIs move between LibTorch releases.
#include "train/process_group.h"

#include <fmt/format.h>

#include <cstdlib>
#include <torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>
#ifdef RAGMIG_WITH_NCCL
#include <cuda_runtime_api.h>  // cudaDeviceGetPCIBusId: which physical GPU a rank is on
#include <unistd.h>            // gethostname

#include <cstdio>
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

#include "core/error.h"
#include "core/strings.h"

namespace ragmig::train {
namespace {

// torch 2.x moved the collectives of Gloo/NCCL to c10d::Backend (ProcessGroup became a dispatcher over them).
#if TORCH_VERSION_MAJOR >= 2
using PgBase = c10d::Backend;
#else
using PgBase = c10d::ProcessGroup;
#endif

int parse_int(const EnvLookup& env, const std::string& key, int lo, int hi) {
  const auto v = env(key);
  if (!v) throw ConfigError("environment variable " + key + " is required here");
  if (const auto x = whole_number(*v, lo, hi)) return static_cast<int>(*x);
  throw ConfigError(fmt::format("environment variable {}={}: expected an integer in [{}, {}]", key, *v, lo, hi));
}

std::optional<std::string> nonempty(const EnvLookup& env, const std::string& key) {
  auto v = env(key);
  if (v && v->empty()) return std::nullopt;
  return v;
}

// Runs a collective and turns whatever Gloo/NCCL throws (peer gone, timeout) into a DeviceError.
template <class Fn>
void guarded(const char* what, Fn&& fn) {
  try {
    fn();
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw PeerLost(fmt::format("{} failed (a replica is gone or timed out): {}", what, e.what()));
  }
}

class C10dCommunicator : public Communicator {
 public:
  C10dCommunicator(c10::intrusive_ptr<c10d::Store> store, c10::intrusive_ptr<PgBase> pg, int rank, int world,
                   BackendChoice choice)
      : store_(std::move(store)), pg_(std::move(pg)), rank_(rank), world_(world), choice_(std::move(choice)),
        host_staging_(choice_.backend == "gloo") {}

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  std::string backend() const override { return choice_.backend; }
  std::string backend_reason() const override { return choice_.reason; }

  void all_reduce_sum(torch::Tensor& t) override {
    torch::Tensor buf = staged(t);
    std::vector<at::Tensor> v{buf};
    guarded("all_reduce", [&] { pg_->allreduce(v)->wait(); });
    if (!buf.is_same(t)) t.copy_(buf);
  }

  std::vector<torch::Tensor> all_gather(const torch::Tensor& t) override {
    torch::Tensor in = staged(t);
    std::vector<std::vector<at::Tensor>> out(1);
    for (int r = 0; r < world_; ++r) out[0].push_back(torch::empty_like(in));
    std::vector<at::Tensor> inputs{in};
    guarded("all_gather", [&] { pg_->allgather(out, inputs)->wait(); });
    std::vector<torch::Tensor> result;
    for (auto& x : out[0]) result.push_back(x.device() == t.device() ? x : x.to(t.device()));
    return result;
  }

  void broadcast(torch::Tensor& t, int root) override {
    torch::Tensor buf = staged(t);
    std::vector<at::Tensor> v{buf};
    c10d::BroadcastOptions o;
    o.rootRank = root;
    guarded("broadcast", [&] { pg_->broadcast(v, o)->wait(); });
    if (!buf.is_same(t)) t.copy_(buf);
  }

  void barrier() override {
    guarded("barrier", [&] { pg_->barrier()->wait(); });
  }

 private:
  // Gloo between MIG instances goes through host memory anyway (no peer-to-peer path): copy explicitly.
  torch::Tensor staged(const torch::Tensor& t) const {
    if (host_staging_ && !t.device().is_cpu()) return t.to(torch::kCPU).contiguous();
    return t.is_contiguous() ? t : t.contiguous();
  }

  c10::intrusive_ptr<c10d::Store> store_;  // kept alive: rank 0 hosts the TCPStore server
  c10::intrusive_ptr<PgBase> pg_;
  int rank_, world_;
  BackendChoice choice_;
  bool host_staging_;
};

}  // namespace

EnvLookup process_env() {
  return [](const std::string& key) -> std::optional<std::string> {
    const char* v = std::getenv(key.c_str());
    if (!v) return std::nullopt;
    return std::string(v);
  };
}

std::string first_slurm_host(const std::string& nodelist) {
  // The first top-level item (commas inside brackets do not separate hosts).
  std::string item;
  int depth = 0;
  for (char c : nodelist) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (depth < 0) throw ConfigError("Slurm node list '" + nodelist + "': unbalanced ']'");
    if (c == ',' && depth == 0) break;
    item += c;
  }
  if (depth != 0) throw ConfigError("Slurm node list '" + nodelist + "': unbalanced '['");
  // Each bracket group contributes the first element of its first range: [03-05,9] -> 03.
  std::string host;
  for (size_t i = 0; i < item.size(); ++i) {
    if (item[i] != '[') {
      host += item[i];
      continue;
    }
    const size_t close = item.find(']', i);
    const std::string group = item.substr(i + 1, close - i - 1);
    const std::string first = group.substr(0, group.find_first_of(",-"));
    if (first.empty()) throw ConfigError("Slurm node list '" + nodelist + "': empty range");
    host += first;
    i = close;
  }
  if (host.empty()) throw ConfigError("Slurm node list is empty");
  return host;
}

std::optional<Rendezvous> rendezvous_from_env(const EnvLookup& env) {
  Rendezvous rv;
  const auto port_from_env = [&](int fallback) {
    return nonempty(env, "MASTER_PORT") ? parse_int(env, "MASTER_PORT", 1, 65535) : fallback;
  };
  if (nonempty(env, "RANK") || nonempty(env, "WORLD_SIZE")) {
    rv.source = "env";
    rv.world_size = parse_int(env, "WORLD_SIZE", 1, 1 << 20);
    rv.rank = parse_int(env, "RANK", 0, rv.world_size - 1);
    rv.local_rank = nonempty(env, "LOCAL_RANK") ? parse_int(env, "LOCAL_RANK", 0, 1 << 20) : rv.rank;
    rv.master_addr = nonempty(env, "MASTER_ADDR").value_or("127.0.0.1");
    rv.master_port = port_from_env(29500);  // torchrun's default
    if (rv.world_size > 1 && !nonempty(env, "MASTER_PORT"))
      throw ConfigError("environment: WORLD_SIZE > 1 needs MASTER_PORT (the rendezvous port of rank 0)");
    return rv;
  }
  if (nonempty(env, "SLURM_NTASKS") && nonempty(env, "SLURM_PROCID")) {
    rv.source = "slurm";
    rv.world_size = parse_int(env, "SLURM_NTASKS", 1, 1 << 20);
    rv.rank = parse_int(env, "SLURM_PROCID", 0, rv.world_size - 1);
    rv.local_rank = nonempty(env, "SLURM_LOCALID") ? parse_int(env, "SLURM_LOCALID", 0, 1 << 20) : 0;
    if (auto addr = nonempty(env, "MASTER_ADDR")) {
      rv.master_addr = *addr;
    } else {
      auto list = nonempty(env, "SLURM_STEP_NODELIST");
      if (!list) list = nonempty(env, "SLURM_JOB_NODELIST");
      if (!list) list = nonempty(env, "SLURM_NODELIST");
      if (!list && rv.world_size > 1)
        throw ConfigError("environment: SLURM_NTASKS > 1 but no SLURM_STEP_NODELIST / SLURM_JOB_NODELIST");
      rv.master_addr = list ? first_slurm_host(*list) : "127.0.0.1";
    }
    // Every task of a job derives the same port from the job id, away from torchrun's 29500.
    const int job = nonempty(env, "SLURM_JOB_ID") ? parse_int(env, "SLURM_JOB_ID", 0, 2147483647) : 0;
    rv.master_port = port_from_env(20000 + job % 10000);
    return rv;
  }
  return std::nullopt;
}

BackendChoice choose_backend(const std::string& requested, bool cuda_tensors, bool nccl_built,
                             const std::vector<RankGpu>& gpus) {
  if (requested != "auto" && requested != "gloo" && requested != "nccl")
    throw ConfigError("config key 'parallel.backend': expected auto, gloo or nccl, got " + requested);
  if (requested == "gloo") return {"gloo", "parallel.backend = gloo"};
  if (!nccl_built) {
    if (requested == "nccl") throw DeviceError("parallel.backend = nccl, but this LibTorch was built without NCCL (use gloo)");
    return {"gloo", "this LibTorch has no NCCL"};
  }
  if (!cuda_tensors) return {"gloo", "the model is on the CPU"};
  for (size_t r = 0; r < gpus.size(); ++r) {
    if (gpus[r].mig) return {"gloo", fmt::format("rank {} is on a MIG instance (no peer-to-peer path for NCCL)", r)};
    for (size_t o = 0; o < r; ++o)
      if (gpus[o].physical == gpus[r].physical)
        return {"gloo", fmt::format("ranks {} and {} share GPU {} (NCCL needs one GPU per rank)", o, r, gpus[r].physical)};
  }
  return {"nccl", "one whole GPU per rank"};
}

namespace {

#ifdef RAGMIG_WITH_NCCL
// This process's GPU: host and PCI bus id, the same for every MIG instance of one GPU.
RankGpu this_gpu(int device) {
  RankGpu g;
  const char* vis = std::getenv("CUDA_VISIBLE_DEVICES");
  g.mig = vis && std::string(vis).rfind("MIG-", 0) == 0;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  char bus[64] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, device) != cudaSuccess) std::snprintf(bus, sizeof bus, "cuda:%d", device);
  g.physical = std::string(host) + "/" + bus;
  return g;
}

// Every rank's GPU, in rank order, exchanged through the rendezvous store.
std::vector<RankGpu> exchange_gpus(c10d::Store& store, const Rendezvous& rv, const RankGpu& mine) {
  const auto key = [](int r) { return "ragmig/gpu/" + std::to_string(r); };
  std::string text = (mine.mig ? "1" : "0") + mine.physical;
  store.set(key(rv.rank), std::vector<uint8_t>(text.begin(), text.end()));
  std::vector<RankGpu> all;
  for (int r = 0; r < rv.world_size; ++r) {
    const auto v = store.get(key(r));
    RankGpu g;
    g.mig = !v.empty() && v[0] == '1';
    if (!v.empty()) g.physical.assign(v.begin() + 1, v.end());
    all.push_back(std::move(g));
  }
  return all;
}
#endif

}  // namespace

std::unique_ptr<Communicator> connect(const Rendezvous& rv, const ConnectOptions& opts) {
#ifdef RAGMIG_WITH_NCCL
  const bool nccl_built = true;
#else
  const bool nccl_built = false;
#endif
  // Everything that needs no peer is decided before the rendezvous; the GPUs of the peers after it.
  BackendChoice choice = choose_backend(opts.backend, opts.cuda_tensors, nccl_built, {});
  c10::intrusive_ptr<c10d::Store> store;
  c10::intrusive_ptr<PgBase> pg;
  try {
    c10d::TCPStoreOptions so;
    so.port = static_cast<std::uint16_t>(rv.master_port);
    so.isServer = rv.rank == 0;
    so.numWorkers = static_cast<std::size_t>(rv.world_size);
    so.waitWorkers = true;
    so.timeout = opts.timeout;
    store = c10::make_intrusive<c10d::TCPStore>(rv.master_addr, so);
#ifdef RAGMIG_WITH_NCCL
    if (choice.backend == "nccl")
      choice = choose_backend(opts.backend, true, true, exchange_gpus(*store, rv, this_gpu(opts.cuda_device)));
#endif
    const std::string& backend = choice.backend;
    if (backend == "nccl") {
#ifdef RAGMIG_WITH_NCCL
      pg = c10::make_intrusive<c10d::ProcessGroupNCCL>(store, rv.rank, rv.world_size);
#else
      throw DeviceError("parallel.backend = nccl, but this LibTorch was built without NCCL (use gloo)");
#endif
    } else {
      auto o = c10d::ProcessGroupGloo::Options::create(opts.timeout);
      if (const char* ifname = std::getenv("GLOO_SOCKET_IFNAME"); ifname && *ifname)
        o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForInterface(ifname));
      else if (rv.master_addr == "127.0.0.1" || rv.master_addr == "localhost")
        o->devices.push_back(c10d::ProcessGroupGloo::createDeviceForHostname("127.0.0.1"));
      else
        o->devices.push_back(c10d::ProcessGroupGloo::createDefaultDevice());
      pg = c10::make_intrusive<c10d::ProcessGroupGloo>(store, rv.rank, rv.world_size, o);
    }
  } catch (const Error&) {
    throw;
  } catch (const std::exception& e) {
    throw DeviceError(fmt::format("rendezvous at {}:{} as rank {} of {} failed: {}", rv.master_addr, rv.master_port,
                                  rv.rank, rv.world_size, e.what()));
  }
  return std::make_unique<C10dCommunicator>(store, pg, rv.rank, rv.world_size, choice);
}

std::vector<torch::Tensor> all_gather_rows(Communicator& comm, const torch::Tensor& local,
                                           const std::vector<int64_t>& sizes) {
  RAGMIG_CHECK(static_cast<int>(sizes.size()) == comm.world_size());
  RAGMIG_CHECK(local.size(0) == sizes[static_cast<size_t>(comm.rank())]);
  const int64_t most = *std::max_element(sizes.begin(), sizes.end());
  torch::Tensor padded = local;
  if (local.size(0) < most) {
    auto shape = local.sizes().vec();
    shape[0] = most - local.size(0);
    padded = torch::cat({local, torch::zeros(shape, local.options())});
  }
  auto parts = comm.all_gather(padded.contiguous());
  for (size_t r = 0; r < parts.size(); ++r) parts[r] = parts[r].slice(0, 0, sizes[r]);
  return parts;
}

}  // namespace ragmig::train
