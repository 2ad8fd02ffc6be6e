#!/usr/bin/env python3
"""PyTorch eager training throughput of GPT-2 124M on one GPU: the baseline
of bench/gpu/gpt2_throughput.sh.

Builds the test GPT of scripts/export_test_models.py at GPT-2 124M size
(the model frenzy-opt plans), trains it with AdamW under bf16 autocast
(fp32 master weights: the precision policy the CUDA backend runs), times
STEPS steps after 3 warm-up steps with CUDA synchronisation, and prints
  torch: <tokens/s> tokens/s, <ms> ms/step, MFU <x>%
MFU counts 6 * params + 12 * layers * seq * width FLOPs per token (the
PaLM/llm.c estimate, attention included) against the GPU's dense bf16 peak
(--peak-tflops, else looked up from the device name).

usage: torch_gpt2_train.py [--batch B] [--seq T] [--steps S] [--compile]
"""
import argparse
import importlib.util
import os
import sys
import time

import torch

PEAKS = {"H100": 989.0, "H200": 989.0, "A100": 312.0, "L40S": 362.0}

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "etm", os.path.join(here, "..", "..", "scripts", "export_test_models.py"))
etm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(etm)

ap = argparse.ArgumentParser()
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--seq", type=int, default=1024)
ap.add_argument("--steps", type=int, default=20)
ap.add_argument("--peak-tflops", type=float, default=0.0)
ap.add_argument("--compile", action="store_true", help="torch.compile the model")
a = ap.parse_args()
if not torch.cuda.is_available():
    print("SKIP pytorch: torch.cuda.is_available() is False")
    sys.exit(0)
name = torch.cuda.get_device_name(0)
peak = a.peak_tflops or next((v for k, v in PEAKS.items() if k in name), 0.0)
torch.manual_seed(0)
layers, width = 12, 768
model = etm.GPT(vocab=50257, block=1024, layers=layers, heads=12, d=width).cuda().train()
params = sum(p.numel() for p in model.parameters())
step_model = torch.compile(model) if a.compile else model
opt = torch.optim.AdamW(model.parameters(), lr=1e-4, weight_decay=0.1, fused=True)
x = torch.randint(0, 50257, (a.batch, a.seq), device="cuda")
y = torch.randint(0, 50257, (a.batch, a.seq), device="cuda")


def step():
    with torch.autocast("cuda", dtype=torch.bfloat16):
        _, loss = step_model(x, y)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    return loss


for _ in range(3):
    step()
torch.cuda.synchronize()
t0 = time.perf_counter()
for _ in range(a.steps):
    loss = step()
torch.cuda.synchronize()
dt = (time.perf_counter() - t0) / a.steps
tokens = a.batch * a.seq / dt
flops_per_token = 6 * params + 12 * layers * a.seq * width
mfu = tokens * flops_per_token / (peak * 1e12) * 100 if peak else float("nan")
mode = "torch.compile" if a.compile else "eager"
print(f"device {name}, GPT-2 124M ({params} params), batch {a.batch} x {a.seq}, "
      f"bf16 autocast {mode}, AdamW, {a.steps} steps, last loss {loss.item():.3f}")
print(f"torch: {tokens:.0f} tokens/s, {dt * 1e3:.1f} ms/step, MFU {mfu:.1f}% "
      f"(peak {peak:.0f} TFLOP/s)")
