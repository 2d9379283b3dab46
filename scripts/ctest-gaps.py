#!/usr/bin/env python3
"""Where a test's time goes beyond its own work: ctest's time per test beside GoogleTest's own total.

    cd build && ctest -j2 --output-junit junit.xml && python3 ../scripts/ctest-gaps.py junit.xml [N]

A large gap means ctest waited after the test itself had finished: usually a process the test started that
outlived it and still holds the output pipe (an alert command's child did, 30 s per run, until 2026-11-29).
A LibTorch test binary's own start costs ~0.6 s. Prints the N (default 25) largest gaps, then the sums.
"""
import math
import re
import sys
import xml.etree.ElementTree as ET


def main() -> None:
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    rows = []
    for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
        total = float(case.get("time", "0"))
        found = re.search(r"test suites? ran\. \((\d+) ms total\)", case.findtext("system-out") or "")
        own = int(found.group(1)) / 1000 if found else math.nan
        rows.append((total - own if found else math.nan, total, own, case.get("name")))
    rows.sort(key=lambda r: -r[0] if not math.isnan(r[0]) else math.inf)
    print(f"{'gap s':>7} {'ctest s':>8} {'gtest s':>8}  test")
    for gap, total, own, name in rows[: int(sys.argv[2]) if len(sys.argv) == 3 else 25]:
        print(f"{gap:7.2f} {total:8.2f} {own:8.2f}  {name}")
    print(f"{len(rows)} tests: ctest {sum(r[1] for r in rows):.0f} s, "
          f"gtest {sum(r[2] for r in rows if not math.isnan(r[2])):.0f} s")


if __name__ == "__main__":
    main()
