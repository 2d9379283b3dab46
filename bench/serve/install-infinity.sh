#!/usr/bin/env bash
# Installs the peer server of bench/serve, Infinity (infinity-emb, torch engine, CPU), into its own venv
# .venv-infinity (git-ignored): its pins (numpy<2, sentence-transformers<4, transformers<5) clash with the
# project's .venv. Pinned exactly in requirements-infinity.txt. Idempotent: a stamp with that file's hash
# makes the second run free.
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=.venv-infinity
requirements=bench/serve/requirements-infinity.txt
python=${RAGMIG_BOOTSTRAP_PYTHON:-python3}
stamp="$venv/.requirements.sha256"
want=$(sha256sum "$requirements" | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -x "$venv/bin/infinity_emb" ]; then
  echo "install-infinity: $venv matches $requirements"
  exit 0
fi
[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
# torch first and alone: a package that asks for torch while none is installed makes pip pull a multi-GB
# CUDA build; torch==2.13.0 is the CPU wheel here.
torch_pin=$(grep -E '^torch==' "$requirements")
echo "install-infinity: $venv: $torch_pin, then $requirements"
"$venv/bin/pip" install -q --disable-pip-version-check "$torch_pin" 2> >(grep -v "is ignored" >&2)
"$venv/bin/pip" install -q --disable-pip-version-check -r "$requirements" 2> >(grep -v "is ignored" >&2)
"$venv/bin/infinity_emb" --help >/dev/null  # the CLI imports: fails here rather than in the bench
echo "$want" >"$stamp"
echo "install-infinity: $("$venv/bin/pip" list --disable-pip-version-check 2>/dev/null | grep -i '^infinity')"
