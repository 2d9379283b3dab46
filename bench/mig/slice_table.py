#!/usr/bin/env python3
"""The table of bench/mig/slice_speed.sh: reads its folder (gpu.json, profiles.json, each run's events.jsonl)
and writes ragmig-slices.txt in MISO's format, `<type> {"<profile>": <seconds per step>, ...}`, which
`ragmig sim --throughputs` reads.

A run named <type>-<g>g measured a slice of g compute slices; its seconds per step (over the progress events
after step 10: warm-up) stand for every MIG profile of this GPU with g compute slices whose memory holds the
run's peak (the progress events' memory_mb, plus 5 % for the CUDA context). Printed beside: samples/s, peak
memory, the speed relative to the whole GPU, and what seven 1g slices do against one whole GPU (> 1: packing
pays).
"""
import json
import os
import sys

WARMUP = 10


def measured(folder):
    """(seconds per step, samples/s, peak MiB) of a run, or None."""
    path = os.path.join(folder, "events.jsonl")
    if not os.path.exists(path):
        return None
    prog = [e for e in map(json.loads, open(path)) if e.get("event") == "progress" and e["step"] > WARMUP]
    if not prog:
        return None
    steps = [prog[0]["step"] - WARMUP] + [b["step"] - a["step"] for a, b in zip(prog, prog[1:])]
    secs = sum(n * e["batch_size"] / e["samples_per_s"] for n, e in zip(steps, prog))
    return secs / sum(steps), sum(n * e["batch_size"] for n, e in zip(steps, prog)) / secs, \
        max(e.get("memory_mb", 0) for e in prog)


def main():
    out = sys.argv[1]
    gpu = json.load(open(os.path.join(out, "gpu.json")))
    profiles = [p for p in json.load(open(os.path.join(out, "profiles.json")))[0]["profiles"]
                if "+" not in p["name"]]
    runs = {}
    for name in sorted(os.listdir(out)):
        if name.endswith("g") and os.path.isdir(os.path.join(out, name)):
            type_, g = name.rsplit("-", 1)
            r = measured(os.path.join(out, name))
            if r:
                runs.setdefault(type_, {})[int(g[:-1])] = r
    print(f"\n{gpu['gpu']}: {gpu['sms']} SMs, {gpu['memory_mib']} MiB; seconds per step (samples/s, peak GiB). A "
          f"column <g>g is an MPS share of g/7 of the SMs standing for a MIG slice of g compute slices: memory and "
          f"its bandwidth are not partitioned as MIG partitions them")
    sizes = sorted({g for r in runs.values() for g in r})
    print(f"{'type':<24}" + "".join(f"{f'{g}g':>24}" for g in sizes) + f"{'7 x 1g / 7g':>13}")
    lines = []
    for type_, by_g in sorted(runs.items()):
        row, entry = f"{type_:<24}", {}
        for g in sizes:
            if g not in by_g:
                row += f"{'-':>24}"
                continue
            s, sps, peak = by_g[g]
            row += f"{f'{s:.4f} ({sps:.0f}, {peak / 1024:.1f})':>24}"
            for p in profiles:
                if p["compute_slices"] == g and peak * 1.05 <= p["memory_mib"]:
                    entry[p["name"]] = round(s, 6)
        packing = f"{7 * by_g[7][0] / by_g[1][0]:.2f}x" if 1 in by_g and 7 in by_g else "-"
        print(row + f"{packing:>13}")
        if entry:
            lines.append(f"{type_} {json.dumps(dict(sorted(entry.items())))}")
    path = os.path.join(out, "ragmig-slices.txt")
    with open(path, "w") as f:
        f.write(f"# ragmig's retriever jobs on {gpu['gpu']}, seconds per step per MIG profile "
                f"(bench/mig/slice_speed.sh: SM shares through MPS)\n")
        f.write("".join(line + "\n" for line in lines))
    print(f"\n{len(lines)} types written to {path}")


if __name__ == "__main__":
    main()
