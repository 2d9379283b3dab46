#!/usr/bin/env python3
"""How close the scheduler's estimates of `ragmig submit`ted trainings come to the seconds the jobs run.

A mixed queue on one CPU slot (sjf unless another policy is given): two MiniLM fine-tunes on SciFact (20 and 30
steps of 16) and two tiny SQuAD trainings from scratch (60 and 150 steps, each with its final evaluation over
18,891 passages), whose FLOP rates differ about 2x. It polls `ragmig status --json` every second while `ragmig run`
works, then prints per job the seconds it ran (`work_s`), its final estimate, the estimates it had while it ran,
(the first is its price when it started: the rate of the jobs like it measured so far) and what pricing all its
FLOPs at the final median rate gives (the scheduler's pricing before jobs were priced by their own progress and by
the jobs like them). Run from the repository root after the build:

    python3 bench/sched/mixed_estimates.py [POLICY]     # RAGMIG=build/src/apps/ragmig STATE=/tmp/mixed-estimates
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

RAGMIG = os.environ.get("RAGMIG", "build/src/apps/ragmig")
STATE = os.environ.get("STATE", "/tmp/mixed-estimates")
JOBS = [
    "ragmig train examples/finetune-scifact-minilm.toml --quiet --set train.max_steps=20 --set train.batch_size=16 "
    "--set train.log_every=2",
    "ragmig train examples/train-squad-tiny.toml --quiet --set train.max_steps=60",
    "ragmig train examples/train-squad-tiny.toml --quiet --set train.max_steps=150",
    "ragmig train examples/finetune-scifact-minilm.toml --quiet --set train.max_steps=30 --set train.batch_size=16 "
    "--set train.log_every=2",
]


def status():
    out = subprocess.run([RAGMIG, "status", "--state", STATE, "--json"], capture_output=True, text=True, check=True)
    return {j["id"]: j for j in json.loads(out.stdout)["jobs"]}


def main():
    policy = sys.argv[1] if len(sys.argv) > 1 else "sjf"
    shutil.rmtree(STATE, ignore_errors=True)
    for cmd in JOBS:
        subprocess.run([RAGMIG, "submit", "--state", STATE, "--cmd", cmd], check=True, capture_output=True)
    log_path = STATE + ".log"
    with open(log_path, "w") as log:
        run = subprocess.Popen([RAGMIG, "run", "--state", STATE, "--cpu-slots", "1", "--policy", policy,
                                "--until-empty"], stdout=log, stderr=subprocess.STDOUT)
        start, seen = time.time(), {}
        while run.poll() is None:
            try:
                for id, job in status().items():
                    if job["state"] == "running":
                        history = seen.setdefault(id, [])
                        estimate = round(job.get("estimate_s", 0), 1)
                        if not history or history[-1][1] != estimate:
                            history.append((round(time.time() - start), estimate))
            except (subprocess.CalledProcessError, json.JSONDecodeError):
                pass  # the store between two writes: the next poll reads it
            time.sleep(1)
    if run.returncode != 0:
        sys.exit(f"ragmig run exited {run.returncode}: see {log_path}")
    medians = re.findall(r"median ([0-9.e+]+) FLOP/s", open(log_path).read())
    median = float(medians[-1]) if medians else None
    print(f"policy {policy}; the jobs' median rate at the end: {median:.3g} FLOP/s" if median else "no rate measured")
    for id, job in sorted(status().items()):
        old = f"{job['work_flops'] / median:.1f} s" if median and "work_flops" in job else "-"
        steps = next((a for a in job["argv"] if a.startswith("train.max_steps=")), "")
        print(f"job {id} ({os.path.basename(job['argv'][2])} {steps}): ran {job.get('work_s', 0):.1f} s, "
              f"final estimate {job.get('estimate_s', 0):.1f} s, all FLOPs at the median {old}; "
              f"(second, estimate) while it ran: {seen.get(id, [])}")


if __name__ == "__main__":
    main()
