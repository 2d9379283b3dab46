#!/usr/bin/env python3
"""Sums a Chrome trace written by `ragmig train --set train.profile_trace=FILE` (Kineto) by kind of work.

On a GPU trace: GPU kernel time by kind (matmul, attention, LayerNorm, dropout, GELU, softmax, optimiser,
pack/unpack, casts and copies, other elementwise), the busiest kernels, and how much of the window the GPU sat
idle (waiting for the host). On a CPU trace: time by top-level operator.
Usage: trace_table.py TRACE.json [--steps N] [--top 15]
"""
import argparse
import collections
import json

KINDS = [  # first match wins; lower-case substrings of kernel names
    ("optimiser", ("adam", "multi_tensor_apply", "foreach")),
    ("attention", ("flash", "fmha", "attention", "efficient")),
    ("matmul", ("gemm", "cutlass", "xmma", "nvjet", "cublas", "sm90_", "sm80_")),
    ("layernorm", ("layer_norm", "layernorm")),
    ("dropout", ("dropout", "bernoulli", "philox")),
    ("gelu", ("gelu",)),
    ("softmax", ("softmax",)),
    ("pack/unpack", ("index", "gather", "scatter", "nonzero")),
    ("reductions", ("reduce", "norm")),
    ("casts/copies", ("copy", "cast", "convert")),
]


def kind_of(name):
    n = name.lower()
    for kind, keys in KINDS:
        if any(k in n for k in keys):
            return kind
    return "other elementwise"


def busy_time(intervals):
    total, end = 0.0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--steps", type=int, default=0, help="steps in the trace (per-step figures)")
    ap.add_argument("--top", type=int, default=15)
    a = ap.parse_args()
    events = json.load(open(a.trace))["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel" and "dur" in e]
    per = a.steps or 1
    if kernels:
        by_kind = collections.defaultdict(lambda: [0.0, 0])
        by_name = collections.defaultdict(lambda: [0.0, 0])
        for k in kernels:
            by_kind[kind_of(k["name"])][0] += k["dur"]
            by_kind[kind_of(k["name"])][1] += 1
            by_name[k["name"]][0] += k["dur"]
            by_name[k["name"]][1] += 1
        total = sum(v[0] for v in by_kind.values())
        start = min(k["ts"] for k in kernels)
        end = max(k["ts"] + k["dur"] for k in kernels)
        busy = busy_time([(k["ts"], k["ts"] + k["dur"]) for k in kernels])
        copies = [e for e in events if e.get("cat") in ("gpu_memcpy", "gpu_memset") and "dur" in e]
        print(f"GPU window {(end - start) / 1e3 / per:.2f} ms/step, kernels busy {busy / 1e3 / per:.2f} ms/step "
              f"({100 * busy / (end - start):.1f} %; idle {100 * (1 - busy / (end - start)):.1f} %), "
              f"{len(kernels) / per:.0f} kernels/step, memcpy/memset {sum(c['dur'] for c in copies) / 1e3 / per:.2f} ms/step")
        print(f"{'kind':<20} {'ms/step':>9} {'share':>7} {'kernels/step':>13}")
        for kind, (us, n) in sorted(by_kind.items(), key=lambda kv: -kv[1][0]):
            print(f"{kind:<20} {us / 1e3 / per:>9.2f} {100 * us / total:>6.1f}% {n / per:>13.0f}")
        print(f"\nbusiest {a.top} kernels:")
        for name, (us, n) in sorted(by_name.items(), key=lambda kv: -kv[1][0])[: a.top]:
            print(f"{us / 1e3 / per:>8.2f} ms/step {n / per:>6.0f}x  {name[:110]}")
    else:
        ops = [e for e in events if e.get("cat") == "cpu_op" and "dur" in e]
        # top-level operators: not inside another operator of the same thread
        ops.sort(key=lambda e: (e.get("tid"), e["ts"], -e["dur"]))
        top, ends = [], {}
        for e in ops:
            if e["ts"] >= ends.get(e.get("tid"), -1):
                top.append(e)
                ends[e.get("tid")] = e["ts"] + e["dur"]
        by = collections.defaultdict(lambda: [0.0, 0])
        for e in top:
            by[e["name"]][0] += e["dur"]
            by[e["name"]][1] += 1
        total = sum(v[0] for v in by.values())
        print(f"CPU trace: top-level operators {total / 1e3 / per:.1f} ms/step")
        for name, (us, n) in sorted(by.items(), key=lambda kv: -kv[1][0])[: a.top]:
            print(f"{us / 1e3 / per:>9.2f} ms/step {100 * us / total:>6.1f}% {n / per:>6.0f}x  {name[:90]}")


if __name__ == "__main__":
    main()
