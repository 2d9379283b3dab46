#!/usr/bin/env bash
# Checks examples/monitoring/: the Prometheus config and alerting rules with promtool (check config, check
# rules, and the unit tests in ragmig-alerts.test.yml), the Grafana dashboard's JSON (every panel has a
# title, the ${DS_PROMETHEUS} datasource and a query on a metric ragmig or dcgm-exporter exports; every
# query parses as PromQL), that the rules and their tests name only metrics ragmig exports, and that no file
# uses the old `exported_job` label (ragmig's per-job label is job_id).
#
#   bash tests/monitor/monitoring_examples_test.sh examples/monitoring
#
# Exits 77 (ctest's SKIP_RETURN_CODE) when promtool is not on PATH (Debian: apt-get install prometheus).
set -euo pipefail

if [[ $# -ne 1 ]]; then
  echo "usage: $0 EXAMPLES_MONITORING_DIR" >&2
  exit 2
fi
src=$1

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

if ! command -v promtool >/dev/null 2>&1; then
  echo "SKIP: promtool is not on PATH (it comes with Prometheus; Debian/Ubuntu: apt-get install prometheus)"
  exit 77
fi
command -v python3 >/dev/null 2>&1 || fail "python3 is not on PATH (needed to check grafana-dashboard.json)"
[[ -d $src ]] || fail "$src is not a folder"

files=(prometheus.yml ragmig-alerts.yml ragmig-alerts.test.yml grafana-dashboard.json README.md)
for f in "${files[@]}"; do
  [[ -f $src/$f ]] || fail "$src/$f is missing"
done

# A scratch copy: rule_files in prometheus.yml and the test file are relative to their own folder, and
# nothing is written beside the sources.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ragmig-monitoring.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
cp "${files[@]/#/$src/}" "$tmp/"

echo "promtool: $(promtool --version 2>&1 | head -n 1)"

# Runs "$@" in $tmp; on failure prints its output and what was being checked, and exits 1.
check() {
  local what=$1
  shift
  echo "== $what"
  local out
  if ! out=$(cd "$tmp" && "$@" 2>&1); then
    printf '%s\n' "$out" | sed 's/^/   | /' >&2
    fail "$what: \`$*\` failed (output above)"
  fi
  printf '%s\n' "$out" | sed 's/^/   | /'
}

check "prometheus.yml is a valid Prometheus config (and loads its rule files)" promtool check config prometheus.yml
check "ragmig-alerts.yml is valid" promtool check rules ragmig-alerts.yml
check "ragmig-alerts.test.yml passes (rule unit tests)" promtool test rules ragmig-alerts.test.yml

# Every alert in ragmig-alerts.yml is named by at least one test case.
echo "== every alert in ragmig-alerts.yml has a test case"
alerts=$(sed -n 's/^[[:space:]]*-[[:space:]]*alert:[[:space:]]*\([A-Za-z0-9_]*\).*/\1/p' "$tmp/ragmig-alerts.yml")
[[ -n $alerts ]] || fail "ragmig-alerts.yml: no alerting rules found"
untested=()
for a in $alerts; do
  grep -Eq "^[[:space:]]*alertname:[[:space:]]*$a[[:space:]]*$" "$tmp/ragmig-alerts.test.yml" || untested+=("$a")
done
((${#untested[@]} == 0)) || fail "ragmig-alerts.test.yml has no test case for: ${untested[*]}"
echo "   | $(wc -w <<<"$alerts") alerts, all tested"

# ragmig's job id is the label job_id; `exported_job` was Prometheus' name for its former label `job`.
echo "== no file uses exported_job (the job id is the label job_id)"
if stale=$(cd "$tmp" && grep -n 'exported_job' "${files[@]}"); then
  printf '%s\n' "$stale" | sed 's/^/   | /' >&2
  fail "exported_job is gone: per-job series carry the job id as job_id"
fi

echo "== grafana-dashboard.json, and the metric names in the rules and their tests"
python3 - "$tmp/grafana-dashboard.json" "$tmp/dashboard-queries.rules.json" "$tmp/ragmig-alerts.yml" \
  "$tmp/ragmig-alerts.test.yml" <<'PY'
import json
import re
import sys

path, rules_out, rule_files = sys.argv[1], sys.argv[2], sys.argv[3:]
errors = []

try:
    with open(path, encoding="utf-8") as f:
        dash = json.load(f)
except json.JSONDecodeError as e:
    sys.exit(f"FAIL: grafana-dashboard.json is not valid JSON: {e}")

# The metrics of `ragmig run|batch --metrics-port` (src/monitor/scheduler_metrics.cpp, monitor.cpp): a quick lint;
# MonitorCli.SweepMetricsMoveWhileItRunsAndTheReportListsAlerts checks the rules' and dashboard's names against
# what a real sweep serves.
known = {
    "ragmig_slot_info", "ragmig_slot_busy", "ragmig_slot_compute_slices", "ragmig_slot_utilization_ratio",
    "ragmig_slot_memory_used_bytes", "ragmig_slot_memory_total_bytes",
    "ragmig_host_memory_used_bytes", "ragmig_host_memory_total_bytes",
    "ragmig_jobs", "ragmig_queue_waiting_jobs", "ragmig_queue_oldest_wait_seconds",
    "ragmig_queue_mean_wait_seconds", "ragmig_queue_finish_timestamp_seconds",
    "ragmig_queue_deadline_timestamp_seconds",
    "ragmig_job_running_seconds", "ragmig_job_attempts", "ragmig_job_preemptions", "ragmig_job_step",
    "ragmig_job_max_steps", "ragmig_job_samples_per_second", "ragmig_job_loss", "ragmig_job_eta_seconds",
    "ragmig_job_last_progress_age_seconds", "ragmig_job_checkpoint_age_seconds",
    "ragmig_job_resident_memory_bytes", "ragmig_job_estimate_seconds", "ragmig_work_rate_flops_per_second",
    "ragmig_scheduler_pass_duration_seconds_bucket", "ragmig_scheduler_pass_duration_seconds_sum",
    "ragmig_scheduler_pass_duration_seconds_count",
    "ragmig_preemptions_total", "ragmig_attempts_ended_total",
    "ragmig_alerts_firing", "ragmig_alerts_total", "ragmig_alert_firing_since_timestamp_seconds",
}
name_re = re.compile(r"\b(ragmig_[A-Za-z0-9_]+|DCGM_[A-Za-z0-9_]+)")

if dash.get("schemaVersion") != 39:
    errors.append(f"schemaVersion is {dash.get('schemaVersion')!r}, expected 39")
variables = dash.get("templating", {}).get("list", [])
if not any(v.get("type") == "datasource" and v.get("name") == "DS_PROMETHEUS" and v.get("query") == "prometheus"
           for v in variables):
    errors.append("templating has no datasource variable DS_PROMETHEUS of type prometheus")


def walk(panels):
    for p in panels:
        yield p
        yield from walk(p.get("panels", []))  # a row's collapsed panels


panels = list(walk(dash.get("panels", [])))
if not panels:
    errors.append("the dashboard has no panels")
ids = [p.get("id") for p in panels]
if len(set(ids)) != len(ids):
    errors.append(f"panel ids are not unique: {ids}")

rules = []
for n, p in enumerate(panels):
    where = f"panel {p.get('id', n)} ({p.get('title', 'untitled')!r})"
    if p.get("type") == "row":
        continue
    if not isinstance(p.get("title"), str) or not p["title"].strip():
        errors.append(f"{where}: no title")
    ds = p.get("datasource")
    if not ds:
        errors.append(f"{where}: no datasource")
    elif not isinstance(ds, dict) or ds.get("uid") != "${DS_PROMETHEUS}":
        errors.append(f"{where}: datasource is {ds!r}, expected uid ${{DS_PROMETHEUS}}")
    if not isinstance(p.get("gridPos"), dict):
        errors.append(f"{where}: no gridPos")
    targets = p.get("targets") or []
    if not targets:
        errors.append(f"{where}: no targets")
    good = False
    for t in targets:
        expr = t.get("expr", "")
        if not expr.strip():
            errors.append(f"{where}, target {t.get('refId')}: empty expr")
            continue
        names = set(name_re.findall(expr))
        unknown = {m for m in names if m.startswith("ragmig_") and m not in known}
        if unknown:
            errors.append(f"{where}, target {t.get('refId')}: unknown metric(s) {sorted(unknown)}")
        if any(m in known or m.startswith("DCGM_") for m in names):
            good = True
        # Grafana's variables, replaced so promtool can parse the query.
        q = re.sub(r"\$\{?(__rate_interval|__interval|__range)\}?", "5m", expr)
        q = re.sub(r"\$\{?[A-Za-z_][A-Za-z0-9_]*\}?", "x", q)
        rules.append({"record": f"dashboard_panel_{p.get('id', n)}_{t.get('refId', 'X')}", "expr": q})
    if targets and not good:
        errors.append(f"{where}: no target queries a ragmig_* metric ragmig exports or a DCGM_* metric")

with open(rules_out, "w", encoding="utf-8") as f:
    json.dump({"groups": [{"name": "dashboard-queries", "rules": rules}]}, f, indent=2)

# The rules and their tests (comment lines aside) name only metrics ragmig exports.
for rf in rule_files:
    with open(rf, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            if line.lstrip().startswith("#"):
                continue
            unknown = {m for m in name_re.findall(line) if m.startswith("ragmig_") and m not in known}
            if unknown:
                errors.append(f"{rf.rsplit('/', 1)[-1]}:{lineno}: unknown metric(s) {sorted(unknown)}")

if errors:
    print("FAIL: grafana-dashboard.json or the rules:", file=sys.stderr)
    for e in errors:
        print(f"  - {e}", file=sys.stderr)
    sys.exit(1)
print(f"   | {len(panels)} panels, {len(rules)} queries: titles, datasources and metric names ok")
PY

# The dashboard's queries as recording rules, so promtool parses every one as PromQL.
check "every grafana-dashboard.json query parses as PromQL" promtool check rules dashboard-queries.rules.json

echo "PASS: $src"
