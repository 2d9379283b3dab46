"""sentence-transformers' MultipleNegativesRankingLoss on given embeddings, for ragmig's loss parity test.

Usage: st_loss.py IN.json OUT.json. IN: {"queries": [[...]], "docs": [positives, negatives column 1, ...] (each
B rows, as sentence-transformers takes them), "scale": s, "cases": [{"directions": [...], "partition_mode": ...,
"hardness_mode": ... | null, "hardness_strength": a}]}. OUT: per case {"loss": l, "grad_queries": [[...]],
"grad_docs": [[[...]]]} in float64, from compute_loss_from_embeddings (no model is run).
"""
import json
import sys
import warnings

import torch
from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss


def main(src, dst):
    spec = json.load(open(src))
    out = []
    for case in spec["cases"]:
        queries = torch.tensor(spec["queries"], dtype=torch.float64, requires_grad=True)
        docs = [torch.tensor(d, dtype=torch.float64, requires_grad=True) for d in spec["docs"]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loss_fn = MultipleNegativesRankingLoss(
                None, scale=spec["scale"], directions=tuple(case["directions"]),
                partition_mode=case["partition_mode"], hardness_mode=case.get("hardness_mode"),
                hardness_strength=case.get("hardness_strength", 0.0))
        loss = loss_fn.compute_loss_from_embeddings([queries] + docs, None)
        loss.backward()
        out.append({"loss": loss.item(), "grad_queries": queries.grad.tolist(),
                    "grad_docs": [d.grad.tolist() for d in docs]})
    json.dump(out, open(dst, "w"))


if __name__ == "__main__":
    main(*sys.argv[1:])
