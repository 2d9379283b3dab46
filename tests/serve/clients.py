#!/usr/bin/env python3
"""The real clients against a running `ragmig serve`, for tests/serve/serve_clients_test.cpp. Prints one JSON
object: what the openai client got (float and base64 encodings, an adapter by name, its error for a bad
request) and the metric families prometheus-client parsed from /metrics.
Usage: clients.py PORT ADAPTER"""
import json
import sys
import urllib.request

import openai
from prometheus_client.parser import text_string_to_metric_families


def main():
    port, adapter = sys.argv[1], sys.argv[2]
    client = openai.OpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key="unused", max_retries=0)
    texts = ["the cat sat on the mat", "protein gene trial"]
    model = client.models.list().data[0].id
    out = {"model": model}
    floats = client.embeddings.create(model=model, input=texts, encoding_format="float")
    out["float"] = [d.embedding for d in floats.data]
    out["prompt_tokens"] = floats.usage.prompt_tokens
    # The client's default asks base64 and decodes it with numpy.
    out["base64"] = [list(map(float, d.embedding)) for d in client.embeddings.create(model=model, input=texts).data]
    out["adapter"] = [d.embedding for d in client.embeddings.create(model=adapter, input=texts[0]).data]
    try:
        client.embeddings.create(model="no-such-adapter", input="x")
        out["error"] = None
    except openai.NotFoundError as e:
        out["error"] = {"status": e.status_code, "param": e.body.get("param") if isinstance(e.body, dict) else None}
    text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics").read().decode()
    families = {}
    for family in text_string_to_metric_families(text):
        families[family.name] = {"type": family.type, "samples": len(family.samples)}
    out["metrics"] = families
    print(json.dumps(out))


if __name__ == "__main__":
    main()
