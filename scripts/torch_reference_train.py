#!/usr/bin/env python3
"""Train a test GPT in PyTorch exactly as frenzy-launch does (reference).

Loads the initial weights from the ONNX model's initializers, reads the same
token file with the same batch windows (runtime/exec/TokenData.h), and runs
AdamW or SGD with momentum, frenzy-opt's schedule (linear warmup, cosine to
min-lr at total-steps) and global-norm clipping. Dropout is disabled, so the run is deterministic and
comparable step by step. Prints "step N/M | loss X" lines and tokens/s.

usage: torch_reference_train.py MODEL.onnx TOKENS.bin --vocab V --batch B
           --seq T --steps N --lr LR [--warmup W] [--total-steps S]
           [--min-lr M] [--clip C] [--optimizer adamw|sgd] [--momentum M]
           [--threads K]
"""
import argparse
import importlib.util
import math
import os
import struct
import time

import onnx
import torch
from onnx import numpy_helper


def load_gpt(path, vocab):
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location(
        "etm", os.path.join(here, "export_test_models.py"))
    etm = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(etm)
    model = etm.GPT(vocab=vocab, block=64, layers=2, heads=4, d=64)
    for mod in model.modules():
        if isinstance(mod, torch.nn.Dropout):
            mod.p = 0.0
    inits = {i.name: torch.tensor(numpy_helper.to_array(i))
             for i in onnx.load(path).graph.initializer}
    state = model.state_dict()
    for key in state:
        name = key.replace("transformer.", "")
        if key == "lm_head.weight":
            name = "wte.weight"
        if name not in inits and key in inits:
            name = key
        if name not in inits:
            raise SystemExit(f"{path}: no initializer for {key}")
        state[key] = inits[name]
    model.load_state_dict(state)
    return model


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model"), p.add_argument("tokens")
    for flag, kind in [("--vocab", int), ("--batch", int), ("--seq", int),
                       ("--steps", int), ("--lr", float), ("--warmup", int),
                       ("--min-lr", float), ("--clip", float), ("--threads", int),
                       ("--total-steps", int), ("--momentum", float)]:
        p.add_argument(flag, type=kind, default=0)
    p.add_argument("--optimizer", default="adamw")
    a = p.parse_args()
    torch.set_num_threads(a.threads or 1)
    model = load_gpt(a.model, a.vocab)
    raw = open(a.tokens, "rb").read()
    n = struct.unpack("<3i", raw[:12])[2]
    toks = torch.tensor(struct.unpack(f"<{n}H", raw[1024:1024 + 2 * n]), dtype=torch.long)
    if a.optimizer == "sgd":
        opt = torch.optim.SGD(model.parameters(), lr=a.lr, momentum=a.momentum)
    else:
        opt = torch.optim.AdamW(model.parameters(), lr=a.lr, weight_decay=0.0,
                                betas=(0.9, 0.999), eps=1e-8)
    span, B, T = n - a.seq, a.batch, a.seq
    start = time.time()
    for s in range(1, a.steps + 1):
        w = [(((s - 1) * B + b) * T) % span for b in range(B)]
        x = torch.stack([toks[i:i + T] for i in w])
        y = torch.stack([toks[i + 1:i + T + 1] for i in w])
        if a.warmup and s <= a.warmup:
            lr = a.lr * s / a.warmup
        elif a.total_steps > a.warmup:
            progress = min(1.0, (s - a.warmup) / (a.total_steps - a.warmup))
            lr = a.min_lr + 0.5 * (a.lr - a.min_lr) * (1 + math.cos(math.pi * progress))
        else:
            lr = a.lr
        for g in opt.param_groups:
            g["lr"] = lr
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        if a.clip:
            torch.nn.utils.clip_grad_norm_(model.parameters(), a.clip)
        opt.step()
        print(f"step {s:5d}/{a.steps} | loss {loss.item():.6f}")
    print(f"torch: {B * T * a.steps / (time.time() - start):.0f} tokens/s")


if __name__ == "__main__":
    main()
