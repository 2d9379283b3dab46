#!/usr/bin/env python3
"""Writes N random LoRA adapters in PEFT's format for one BERT base folder, for bench_serve.py --adapters:
DIR/adapter-000 ... each with adapter_config.json and adapter_model.safetensors (r, alpha, targets as asked;
A and B random, seeded, so every adapter changes the embeddings). No torch model is built: it takes seconds.
Usage: make_adapters.py BASE_FOLDER OUT_DIR [--count 100] [--rank 8] [--targets query,key,value]"""
import argparse
import json
import os

import numpy as np
from safetensors.numpy import save_file


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--rank", type=int, default=8)
    ap.add_argument("--targets", default="query,key,value")
    a = ap.parse_args()
    config = json.load(open(os.path.join(a.base, "config.json")))
    hidden, layers = config["hidden_size"], config["num_hidden_layers"]
    targets = a.targets.split(",")
    for k in range(a.count):
        rng = np.random.default_rng(k)
        tensors = {}
        for layer in range(layers):
            for t in targets:
                name = f"base_model.model.encoder.layer.{layer}.attention.self.{t}"
                tensors[name + ".lora_A.weight"] = (rng.standard_normal((a.rank, hidden)) * 0.02).astype(np.float32)
                tensors[name + ".lora_B.weight"] = (rng.standard_normal((hidden, a.rank)) * 0.02).astype(np.float32)
        folder = os.path.join(a.out, f"adapter-{k:03d}")
        os.makedirs(folder, exist_ok=True)
        save_file(tensors, os.path.join(folder, "adapter_model.safetensors"), metadata={"format": "pt"})
        with open(os.path.join(folder, "adapter_config.json"), "w") as f:
            json.dump({"peft_type": "LORA", "base_model_name_or_path": os.path.abspath(a.base), "r": a.rank,
                       "lora_alpha": 2 * a.rank, "lora_dropout": 0.0, "target_modules": targets, "bias": "none",
                       "fan_in_fan_out": False, "use_dora": False, "modules_to_save": None}, f, indent=2)
    print(f"make_adapters: {a.count} adapters (r={a.rank}, {','.join(targets)}) in {a.out}")


if __name__ == "__main__":
    main()
