"""Sums two autograd-profiler chrome traces (bench_train --profile: the C++ and the Python side of one shape) by
operator name and prints them side by side, largest total first: where one side spends time the other does not.
Usage: profile_table.py CPP.json PY.json [--top N]"""
import argparse
import collections
import json


def totals(path):
    events = json.load(open(path))
    events = events["traceEvents"] if isinstance(events, dict) else events
    out = collections.defaultdict(lambda: [0.0, 0])
    for e in events:
        if e.get("ph") == "X" and "dur" in e:
            out[e["name"]][0] += e["dur"] / 1000.0
            out[e["name"]][1] += 1
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cpp")
    ap.add_argument("py")
    ap.add_argument("--top", type=int, default=30)
    a = ap.parse_args()
    cpp, py = totals(a.cpp), totals(a.py)
    names = sorted(set(cpp) | set(py), key=lambda n: -max(cpp[n][0], py[n][0]))
    print(f"{'op (inclusive ms, calls)':<44} {'C++ ms':>10} {'calls':>7} {'Python ms':>10} {'calls':>7}")
    for n in names[: a.top]:
        print(f"{n[:44]:<44} {cpp[n][0]:>10.1f} {cpp[n][1]:>7} {py[n][0]:>10.1f} {py[n][1]:>7}")


if __name__ == "__main__":
    main()
