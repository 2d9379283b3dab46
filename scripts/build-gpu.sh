#!/usr/bin/env bash
# Builds ragmig on a GPU machine against the CUDA LibTorch of the PyTorch installed there (the LibTorch GPU
# users have), with NCCL on. The Debian packages come from `scripts/install-deps.sh --system` (no CPU venv).
#   PYTHON=python3 BUILD=build-gpu bash scripts/build-gpu.sh    then: cd build-gpu && ctest -L 'cuda|hf'
set -euo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-python3}
build=${BUILD:-build-gpu}
"$python" -c 'import torch; assert torch.version.cuda, "torch " + torch.__version__ + " has no CUDA"' \
  || { echo "build-gpu: $python's torch has no CUDA: install PyTorch's CUDA wheel there" >&2; exit 1; }
# PyTorch's wheels keep NCCL's headers in the nvidia-nccl package beside torch.
nccl_inc=$("$python" -c 'import nvidia.nccl, os; print(os.path.join(list(nvidia.nccl.__path__)[0], "include"))' 2>/dev/null || true)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRAGMIG_PYTHON="$python" -DRAGMIG_WITH_NCCL=ON \
  ${nccl_inc:+-DCMAKE_CXX_FLAGS="-isystem $nccl_inc"} ${EXTRA_CMAKE:-}
cmake --build "$build" -j "$(nproc)"
echo "build-gpu: built $build/src/apps/ragmig against $("$python" -c 'import torch; print(torch.__version__)')"
