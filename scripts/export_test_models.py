#!/usr/bin/env python3
"""Exports Frenzy's test models (GPT-2, Llama-style, BERT-style) to ONNX with Debian's torch.

Usage: export_test_models.py OUTDIR            small models used by the lit tests
       export_test_models.py --gpt2-124m FILE  the 124M GPT-2 (regenerated on demand)

Every model is exported as a real exporter writes it: torch.onnx.export with
do_constant_folding=False and dynamic batch/seq axes. A NAME.json beside each
model records PyTorch's parameter count (unique tensors) and layer count,
which the lit tests compare with what frenzy-opt reports.
"""
import argparse
import json
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F


# --- nanoGPT-style GPT-2 ----------------------------------------------------
class CausalSelfAttention(nn.Module):
    def __init__(self, d, heads, block):
        super().__init__()
        self.c_attn = nn.Linear(d, 3 * d)
        self.c_proj = nn.Linear(d, d)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)
        self.n_head = heads
        self.register_buffer("bias", torch.tril(torch.ones(block, block)).view(1, 1, block, block))

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = self.attn_dropout(F.softmax(att, dim=-1))
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.c_fc = nn.Linear(d, 4 * d)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * d, d)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x):
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))


class Block(nn.Module):
    def __init__(self, d, heads, block):
        super().__init__()
        self.ln_1 = nn.LayerNorm(d)
        self.attn = CausalSelfAttention(d, heads, block)
        self.ln_2 = nn.LayerNorm(d)
        self.mlp = MLP(d)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, vocab, block, layers, heads, d):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(vocab, d), wpe=nn.Embedding(block, d), drop=nn.Dropout(0.1),
            h=nn.ModuleList([Block(d, heads, block) for _ in range(layers)]), ln_f=nn.LayerNorm(d)))
        self.lm_head = nn.Linear(d, vocab, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied, as in GPT-2

    def forward(self, idx, targets=None):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))
        if targets is None:
            return logits
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))
        return logits, loss


# --- Llama-style decoder ------------------------------------------------------
class RMSNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d))
        self.eps = eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, d, heads, max_pos):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.q_proj = nn.Linear(d, d, bias=False)
        self.k_proj = nn.Linear(d, d, bias=False)
        self.v_proj = nn.Linear(d, d, bias=False)
        self.o_proj = nn.Linear(d, d, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        freqs = torch.outer(torch.arange(max_pos).float(), inv_freq)
        emb = torch.cat((freqs, freqs), dim=-1)
        self.register_buffer("cos_cached", emb.cos())
        self.register_buffer("sin_cached", emb.sin())

    def forward(self, x, mask):
        B, T, C = x.shape
        q = self.q_proj(x).view(B, T, self.heads, self.hd).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.heads, self.hd).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.heads, self.hd).transpose(1, 2)
        cos, sin = self.cos_cached[:T], self.sin_cached[:T]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        att = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.hd) + mask
        att = F.softmax(att, dim=-1)
        y = torch.matmul(att, v).transpose(1, 2).reshape(B, T, C)
        return self.o_proj(y)


class LlamaMLP(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.gate_proj = nn.Linear(d, hidden, bias=False)
        self.up_proj = nn.Linear(d, hidden, bias=False)
        self.down_proj = nn.Linear(hidden, d, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaLayer(nn.Module):
    def __init__(self, d, heads, hidden, max_pos):
        super().__init__()
        self.input_layernorm = RMSNorm(d)
        self.self_attn = LlamaAttention(d, heads, max_pos)
        self.post_attention_layernorm = RMSNorm(d)
        self.mlp = LlamaMLP(d, hidden)

    def forward(self, x, mask):
        x = x + self.self_attn(self.input_layernorm(x), mask)
        return x + self.mlp(self.post_attention_layernorm(x))


class LlamaModel(nn.Module):
    def __init__(self, vocab, layers, heads, d, hidden, max_pos):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([LlamaLayer(d, heads, hidden, max_pos) for _ in range(layers)])
        self.norm = RMSNorm(d)


class Llama(nn.Module):
    def __init__(self, vocab=512, layers=2, heads=4, d=64, hidden=172, max_pos=128):
        super().__init__()
        self.model = LlamaModel(vocab, layers, heads, d, hidden, max_pos)
        self.lm_head = nn.Linear(d, vocab, bias=False)

    def forward(self, input_ids, labels=None):
        T = input_ids.shape[1]
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        x = self.model.embed_tokens(input_ids)
        for layer in self.model.layers:
            x = layer(x, mask)
        logits = self.lm_head(self.model.norm(x))
        if labels is None:
            return logits
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))


# --- BERT-style encoder -----------------------------------------------------------
class Bert(nn.Module):
    def __init__(self, vocab=512, d=64, heads=4, layers=2, ff=256, max_pos=128):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, d)
        self.position_embeddings = nn.Embedding(max_pos, d)
        self.token_type_embeddings = nn.Embedding(2, d)
        self.emb_norm = nn.LayerNorm(d)
        self.emb_drop = nn.Dropout(0.1)
        layer = nn.TransformerEncoderLayer(d_model=d, nhead=heads, dim_feedforward=ff,
                                           activation="gelu", batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        self.mlm_dense = nn.Linear(d, d)
        self.mlm_act = nn.GELU()
        self.mlm_norm = nn.LayerNorm(d)
        self.mlm_decoder = nn.Linear(d, vocab)

    def forward(self, input_ids, token_type_ids, labels=None):
        T = input_ids.shape[1]
        pos = torch.arange(T, dtype=torch.long)
        x = self.word_embeddings(input_ids) + self.position_embeddings(pos) \
            + self.token_type_embeddings(token_type_ids)
        x = self.encoder(self.emb_drop(self.emb_norm(x)))
        logits = self.mlm_decoder(self.mlm_norm(self.mlm_act(self.mlm_dense(x))))
        if labels is None:
            return logits
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))


def count_params(model):
    return sum(p.numel() for p in model.parameters())  # unique tensors: ties count once


def export(model, args, input_names, output_names, path, opset, layers, training=True):
    dyn = {n: {0: "batch", 1: "seq"} for n in input_names}
    dyn.update({n: {0: "batch", 1: "seq"} for n in output_names if n != "loss"})
    # A training compiler gets the training graph (dropout included). An
    # eval-mode export also deduplicates equal-valued parameters (Identity).
    model.train(training)
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, args, path, opset_version=opset, do_constant_folding=False,
                      input_names=input_names, output_names=output_names, dynamic_axes=dyn,
                      training=mode)
    meta = {"params": count_params(model), "blocks": layers, "opset": opset}
    with open(os.path.splitext(path)[0] + ".json", "w") as f:
        json.dump(meta, f)
    print(f"{path}: {meta['params']:,} parameters, {layers} blocks, "
          f"{os.path.getsize(path) / 1e6:.2f} MB", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", nargs="?", help="directory for the small test models")
    ap.add_argument("--gpt2-124m", metavar="FILE", help="export GPT-2 124M to FILE")
    a = ap.parse_args()
    torch.manual_seed(0)
    B, T = 2, 8
    idx = torch.randint(0, 512, (B, T))
    if a.gpt2_124m:
        gpt = GPT(50257, 1024, 12, 12, 768)
        export(gpt, (torch.randint(0, 50257, (B, T)),), ["idx"], ["logits"], a.gpt2_124m, 17, 12)
        return
    if not a.outdir:
        ap.error("give OUTDIR or --gpt2-124m FILE")
    os.makedirs(a.outdir, exist_ok=True)
    out = lambda name: os.path.join(a.outdir, name)
    gpt = GPT(512, 64, 2, 4, 64)
    export(gpt, (idx,), ["idx"], ["logits"], out("gpt2_tiny_op17.onnx"), 17, 2)
    export(gpt, (idx,), ["idx"], ["logits"], out("gpt2_tiny_op14.onnx"), 14, 2)
    export(gpt, (idx, idx), ["idx", "targets"], ["logits", "loss"],
           out("gpt2_tiny_loss_op17.onnx"), 17, 2)
    export(gpt, (idx,), ["idx"], ["logits"], out("gpt2_tiny_eval_op17.onnx"), 17, 2,
           training=False)
    llama = Llama()
    export(llama, (idx,), ["input_ids"], ["logits"], out("llama_tiny_op17.onnx"), 17, 2)
    export(llama, (idx, idx), ["input_ids", "labels"], ["logits", "loss"],
           out("llama_tiny_loss_op17.onnx"), 17, 2)
    bert = Bert()
    tt = torch.zeros(B, T, dtype=torch.long)
    export(bert, (idx, tt), ["input_ids", "token_type_ids"], ["logits"],
           out("bert_tiny_op17.onnx"), 17, 2)
    export(bert, (idx, tt, idx), ["input_ids", "token_type_ids", "labels"], ["logits", "loss"],
           out("bert_tiny_loss_op17.onnx"), 17, 2)


if __name__ == "__main__":
    main()
