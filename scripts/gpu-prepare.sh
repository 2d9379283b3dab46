#!/usr/bin/env bash
# Fills the git-ignored .gpu/ for a check on the lent GPU machine: runs ../shared/tools/gpu/prepare.sh (Debian
# libraries relocated to /opt/dsys, data, build script) and adds what ragmig needs beyond that recipe's list:
# cpp-httplib (serve, monitor) with the OpenSSL and brotli headers its header includes and brotli's libraries.
# Then, on the GPU machine (carry [".gpu"]): bash .gpu/build.sh && . /opt/b/env.sh && <checks>
# (CMake finds cpp-httplib there by name: see the top-level CMakeLists.txt.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash ../shared/tools/gpu/prepare.sh
# BUILD_TARGETS="a b" makes the recipe's build.sh build only those (scripts/gpu-lease.sh builds ragmig first and the
# tests beside the checks).
line='cmake --build /opt/b -j"$(nproc)"'
sed -i "s|$line -- -k 0|$line \${BUILD_TARGETS:+--target \$BUILD_TARGETS} -- -k 0|" .gpu/build.sh
grep -q BUILD_TARGETS .gpu/build.sh || { echo "gpu-prepare: the recipe's build line changed: see .gpu/build.sh" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/tree" "$work/debs"
tar xJf .gpu/dsys.tar.xz -C "$work/tree"
(cd "$work/debs" && apt-get download -q libcpp-httplib-dev libcpp-httplib0.11 libbrotli-dev libbrotli1 libssl-dev \
  >/dev/null 2>&1)
for f in "$work"/debs/*.deb; do dpkg -x "$f" "$work/tree"; done
inc=$work/tree/usr/include
# Debian keeps OpenSSL's configuration headers under the multiarch folder, which is not on the include path there.
cp -r "$inc"/x86_64-linux-gnu/openssl/. "$inc/openssl/"
rm -rf "$inc/x86_64-linux-gnu" "$work/tree/usr/share/doc" "$work/tree/usr/share/man"
tar cJf .gpu/dsys.tar.xz -C "$work/tree" .
du -sh .gpu
