#!/usr/bin/env python3
"""Peak GPU memory of a PyTorch training step, to check the memory analysis.

Builds the test GPT (scripts/export_test_models.py) at GPT-2 124M size, runs
AdamW training steps in fp32 eager mode (nothing recomputed, dropout masks
kept: the analysis's recompute=none with stored masks) and prints
torch.cuda.max_memory_allocated() of the second step, when the optimizer
state exists. Run on a machine with a GPU (the lent one).

usage: torch_peak.py --batch B --seq T
"""
import argparse
import importlib.util
import os

import torch

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "etm", os.path.join(here, "..", "..", "scripts", "export_test_models.py"))
etm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(etm)

ap = argparse.ArgumentParser()
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--seq", type=int, default=1024)
a = ap.parse_args()
torch.manual_seed(0)
model = etm.GPT(vocab=50257, block=1024, layers=12, heads=12, d=768).cuda().train()
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, foreach=False)
x = torch.randint(0, 50257, (a.batch, a.seq), device="cuda")
y = torch.randint(0, 50257, (a.batch, a.seq), device="cuda")
for step in range(2):
    if step == 1:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
    logits, loss = model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    del logits, loss
torch.cuda.synchronize()
params = sum(p.numel() for p in model.parameters())
print(f"params {params}, batch {a.batch} x {a.seq}, fp32 eager, AdamW")
print(f"torch peak allocated: {torch.cuda.max_memory_allocated()} B")
