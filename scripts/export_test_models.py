#!/usr/bin/env python3
"""Exports Frenzy's test models (nanoGPT GPT-2, Llama-style, BERT-style) to ONNX with torch."""
# Usage (Debian's /usr/bin/python3: python3-torch 1.13, python3-onnx 1.12):
#   export_test_models.py [OUTDIR]          small models for the lit tests
#                                           (default: test/Inputs/models)
#   export_test_models.py --gpt2-124m FILE  GPT-2 124M, forward only, opset 17
#   export_test_models.py --llama-shared-rope FILE
#                                           Llama, rotary buffers named cos/sin
#   export_test_models.py --fused-slices FILE
#                                           GPT-style, fused QKV and gate/up
#                                           projections cut by Slices, with loss
#   add --report to print, per model, its op types, one layer's node names,
#   its initializers, Identity nodes and initializers shared by several nodes.
#
# Models are exported the way a user would: torch.onnx.export with
# do_constant_folding=False and dynamic 'batch'/'seq' axes. NAME.json beside
# each model holds PyTorch's parameter count (unique tensors, so a tied
# weight counts once), the layer count and the opset; the lit tests compare
# them with what frenzy-opt reports. Every model is run through
# onnx.checker and strict shape inference after export.
import argparse
import collections
import json
import math
import os
import re
import sys

import onnx
import torch
import torch.nn as nn
import torch.nn.functional as F

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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

    def split_qkv(self, qkv, C):
        return qkv.split(C, dim=2)

    def forward(self, x):
        B, T, C = x.size()
        q, k, v = self.split_qkv(self.c_attn(x), C)
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
        # Buffers, not parameters: the importer must not count them as weights.
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


class LlamaDecoderLayer(nn.Module):
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
        self.layers = nn.ModuleList([LlamaDecoderLayer(d, heads, hidden, max_pos)
                                     for _ in range(layers)])
        self.norm = RMSNorm(d)

    def forward(self, input_ids):
        # The mask is built here, at run time, as HF does: -inf above the
        # diagonal (ConstantOfShape + Trilu in ONNX), added to the scores.
        T = input_ids.shape[1]
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x, mask)
        return self.norm(x)


class Llama(nn.Module):
    def __init__(self, vocab=512, layers=2, heads=4, d=64, hidden=172, max_pos=128):
        super().__init__()
        # Calling self.model (not its children) keeps HF's node scopes:
        # "/model/layers.0/self_attn/q_proj/MatMul".
        self.model = LlamaModel(vocab, layers, heads, d, hidden, max_pos)
        self.lm_head = nn.Linear(d, vocab, bias=False)  # untied

    def forward(self, input_ids, labels=None):
        logits = self.lm_head(self.model(input_ids))
        if labels is None:
            return logits
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))


class LlamaSharedRope(nn.Module):
    """Llama as Hugging Face writes it since 2024: one rotary table for all
    layers, held by the top module as registered buffers named plainly `cos`
    and `sin` (nothing in the names says "rotary" or "cache")."""

    def __init__(self, vocab=512, layers=2, heads=4, d=64, hidden=172, max_pos=64):
        super().__init__()
        self.heads, self.hd = heads, d // heads
        self.embed_tokens = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList([LlamaDecoderLayer(d, heads, hidden, max_pos)
                                     for _ in range(layers)])
        for layer in self.layers:  # the layers read the shared table below
            del layer.self_attn.cos_cached, layer.self_attn.sin_cached
        self.norm = RMSNorm(d)
        self.lm_head = nn.Linear(d, vocab, bias=False)
        inv_freq = 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd))
        emb = torch.cat([torch.outer(torch.arange(max_pos).float(), inv_freq)] * 2, dim=-1)
        self.register_buffer("cos", emb.cos())
        self.register_buffer("sin", emb.sin())

    def forward(self, input_ids, labels=None):
        T = input_ids.shape[1]
        mask = torch.triu(torch.full((T, T), float("-inf")), diagonal=1)
        cos, sin = self.cos[:T], self.sin[:T]
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            a = layer.self_attn
            h = layer.input_layernorm(x)
            B, _, C = h.shape
            q = a.q_proj(h).view(B, T, a.heads, a.hd).transpose(1, 2)
            k = a.k_proj(h).view(B, T, a.heads, a.hd).transpose(1, 2)
            v = a.v_proj(h).view(B, T, a.heads, a.hd).transpose(1, 2)
            q = q * cos + rotate_half(q) * sin
            k = k * cos + rotate_half(k) * sin
            att = F.softmax(torch.matmul(q, k.transpose(2, 3)) / math.sqrt(a.hd) + mask, dim=-1)
            x = x + a.o_proj(torch.matmul(att, v).transpose(1, 2).reshape(B, T, C))
            x = x + layer.mlp(layer.post_attention_layernorm(x))
        logits = self.lm_head(self.norm(x))
        if labels is None:
            return logits
        return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), labels.view(-1))


# --- fused projections cut by slicing --------------------------------------------
class SlicedAttention(CausalSelfAttention):
    """c_attn's output cut by indexing (ONNX Slice) instead of .split (Split)."""

    def split_qkv(self, qkv, C):
        return qkv[..., :C], qkv[..., C:2 * C], qkv[..., 2 * C:]


class FusedGatedMLP(nn.Module):
    """SwiGLU with gate and up in one Linear (bias on), cut by indexing."""

    def __init__(self, d, hidden=128):
        super().__init__()
        self.hidden = hidden
        self.gate_up = nn.Linear(d, 2 * hidden)
        self.down = nn.Linear(hidden, d)

    def forward(self, x):
        gu = self.gate_up(x)
        return self.down(F.silu(gu[..., :self.hidden]) * gu[..., self.hidden:])


def fused_slices_gpt():
    gpt = GPT(vocab=512, block=64, layers=2, heads=4, d=64)
    for blk in gpt.transformer.h:
        blk.attn = SlicedAttention(64, 4, 64)
        blk.mlp = FusedGatedMLP(64)
    return gpt


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
                                           activation="gelu", batch_first=True, norm_first=False)
        self.encoder = nn.TransformerEncoder(layer, num_layers=layers, enable_nested_tensor=False)
        # nn.TransformerEncoder deep-copies one layer, so every layer starts
        # with the same weights; redraw them so layers differ as in a trained
        # model (an eval-mode export would otherwise fold layer 1 into layer 0
        # behind Identity nodes).
        for enc in self.encoder.layers:
            for lin in (enc.linear1, enc.linear2, enc.self_attn.out_proj):
                lin.reset_parameters()
            enc.self_attn._reset_parameters()
        self.mlm_dense = nn.Linear(d, d)
        self.mlm_act = nn.GELU()  # erf
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


# --- export and checks --------------------------------------------------------------
def count_params(model):
    return sum(p.numel() for p in model.parameters())  # parameters() yields a tied tensor once


def check(path, report):
    """onnx.checker + strict shape inference; with report, print the graph's make-up."""
    # By path, so that models over 2 GB (external data) are checked too.
    onnx.checker.check_model(path)
    m = onnx.load(path, load_external_data=False)
    onnx.shape_inference.infer_shapes(m, check_type=True, strict_mode=True)
    if not report:
        return
    g = m.graph
    dims = lambda vi: [d.dim_param or d.dim_value for d in vi.type.tensor_type.shape.dim]
    print(f"== {os.path.basename(path)} (opset {m.opset_import[0].version}, {len(g.node)} nodes)")
    print("inputs: ", [(i.name, dims(i)) for i in g.input])
    print("outputs:", [(o.name, dims(o)) for o in g.output])
    print("ops:", dict(sorted(collections.Counter(n.op_type for n in g.node).items())))
    layer = [n.name for n in g.node if re.search(r"/(h|layers)\.0/", n.name)]
    print(f"layer 0 ({len(layer)} nodes):", layer)
    print("initializers:", [(t.name, list(t.dims)) for t in g.initializer])
    print("Identity:", [f"{n.input[0]} -> {n.output[0]}"
                        for n in g.node if n.op_type == "Identity"])
    inits = {t.name for t in g.initializer}
    users = collections.defaultdict(list)
    for n in g.node:
        for i in n.input:
            if i in inits:
                users[i].append(n.name)
    print("initializers read by several nodes:", {k: v for k, v in users.items() if len(v) > 1})


def export(model, args, input_names, output_names, path, opset, layers, training, report):
    dyn = {n: {0: "batch", 1: "seq"} for n in input_names}
    dyn.update({n: {0: "batch", 1: "seq"} for n in output_names if n != "loss"})
    # Training mode by default: a training compiler is given the training
    # graph (Dropout kept), and torch then shares initializers only when they
    # are the same tensor. Eval mode also merges parameters that merely hold
    # equal values behind Identity nodes (gpt2_tiny_eval tests that case).
    model.train(training)
    mode = torch.onnx.TrainingMode.TRAINING if training else torch.onnx.TrainingMode.EVAL
    torch.onnx.export(model, args, path, opset_version=opset, do_constant_folding=False,
                      input_names=input_names, output_names=output_names, dynamic_axes=dyn,
                      training=mode)
    meta = {"params": count_params(model), "blocks": layers, "opset": opset}
    with open(os.path.splitext(path)[0] + ".json", "w") as f:
        json.dump(meta, f)
    check(path, report)
    print(f"{path}: {meta['params']:,} parameters, {layers} blocks, opset {opset}, "
          f"{'training' if training else 'eval'} mode, {os.path.getsize(path) / 1e6:.2f} MB",
          file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip())
    ap.add_argument("outdir", nargs="?", default=os.path.join(REPO, "test", "Inputs", "models"),
                    help="directory for the small test models (default: test/Inputs/models)")
    ap.add_argument("--gpt2-124m", metavar="FILE", help="export only GPT-2 124M, to FILE")
    ap.add_argument("--gpt2-1.5b", dest="gpt2_xl", metavar="FILE",
                    help="export only GPT-2 1.5B (XL), to FILE (about 6 GB, external data)")
    ap.add_argument("--llama-shared-rope", metavar="FILE",
                    help="export only a Llama whose rotary tables are buffers named cos and "
                         "sin, with a loss output, to FILE")
    ap.add_argument("--fused-slices", metavar="FILE",
                    help="export only a GPT-style model whose fused QKV and gate/up "
                         "projections are cut by Slices, with a loss output, to FILE")
    ap.add_argument("--report", action="store_true", help="print each model's make-up")
    a = ap.parse_args()
    torch.manual_seed(0)
    B, T = 2, 8  # example input; batch and seq stay symbolic in the graph
    idx = torch.randint(0, 512, (B, T))
    if a.gpt2_xl:
        gpt = GPT(vocab=50257, block=1024, layers=48, heads=25, d=1600)
        export(gpt, (torch.randint(0, 50257, (B, T)),), ["idx"], ["logits"], a.gpt2_xl,
               17, 48, True, a.report)
        return
    if a.llama_shared_rope:
        export(LlamaSharedRope(), (idx, idx), ["input_ids", "labels"], ["logits", "loss"],
               a.llama_shared_rope, 17, 2, True, a.report)
        return
    if a.fused_slices:
        export(fused_slices_gpt(), (idx, idx), ["idx", "targets"], ["logits", "loss"],
               a.fused_slices, 17, 2, True, a.report)
        return
    if a.gpt2_124m:
        gpt = GPT(vocab=50257, block=1024, layers=12, heads=12, d=768)
        export(gpt, (torch.randint(0, 50257, (B, T)),), ["idx"], ["logits"], a.gpt2_124m,
               17, 12, True, a.report)
        return
    os.makedirs(a.outdir, exist_ok=True)
    out = lambda name: os.path.join(a.outdir, name)
    gpt = GPT(vocab=512, block=64, layers=2, heads=4, d=64)
    x = (gpt, (idx,), ["idx"], ["logits"])
    export(*x, out("gpt2_tiny_op17.onnx"), 17, 2, True, a.report)
    export(*x, out("gpt2_tiny_op14.onnx"), 14, 2, True, a.report)
    export(gpt, (idx, idx), ["idx", "targets"], ["logits", "loss"],
           out("gpt2_tiny_loss_op17.onnx"), 17, 2, True, a.report)
    export(*x, out("gpt2_tiny_eval_op17.onnx"), 17, 2, False, a.report)
    llama = Llama()
    export(llama, (idx,), ["input_ids"], ["logits"], out("llama_tiny_op17.onnx"), 17, 2,
           True, a.report)
    export(llama, (idx, idx), ["input_ids", "labels"], ["logits", "loss"],
           out("llama_tiny_loss_op17.onnx"), 17, 2, True, a.report)
    bert = Bert()
    tt = torch.zeros(B, T, dtype=torch.long)
    export(bert, (idx, tt), ["input_ids", "token_type_ids"], ["logits"],
           out("bert_tiny_op17.onnx"), 17, 2, True, a.report)
    export(bert, (idx, tt, idx), ["input_ids", "token_type_ids", "labels"], ["logits", "loss"],
           out("bert_tiny_loss_op17.onnx"), 17, 2, True, a.report)


if __name__ == "__main__":
    main()
