#!/usr/bin/env bash
# Installs every Debian package ragmig needs to build, test and benchmark. Idempotent: packages already
# present are left alone, so running it twice costs one dpkg query.
set -euo pipefail

packages=(
  build-essential cmake pkg-config ninja-build
  libtorch-dev libgloo-dev libopenblas0-openmp  # LibTorch (CPU) and c10d headers; OpenMP OpenBLAS, see BUILD-NOTES
  nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libfmt-dev zlib1g-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libfaiss-dev libblas-dev liblapack-dev libstemmer-dev  # eval: FAISS (static, links BLAS/LAPACK + OpenMP), Snowball
  python3 python3-torch  # the Python reference side of bench/train
  chromium  # the browser test of the sweep report (headless; the test skips without it)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
