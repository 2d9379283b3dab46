"""Scrapes a /metrics URL and parses it with the real prometheus-client, as Prometheus' own Python tooling
would: prints {"sample name": [{"labels": {...}, "value": v}, ...]} as JSON, or fails on text it cannot parse.
With --raw, prints the text as served (for `promtool check metrics`)."""
import json
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

raw = sys.argv[1] == "--raw"
url = sys.argv[-1]
text = urllib.request.urlopen(url, timeout=10).read().decode("utf-8")
if raw:
    sys.stdout.write(text)
    sys.exit(0)
out = {}
for family in text_string_to_metric_families(text):
    for sample in family.samples:
        out.setdefault(sample.name, []).append({"labels": sample.labels, "value": sample.value})
print(json.dumps(out))
