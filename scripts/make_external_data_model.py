#!/usr/bin/env python3
"""Writes a Llama-2-7B-shaped (or GPT-3-175B- or GPT-2-1.5B-sized) ONNX model whose weights are external data in one sparse side file."""
# Usage: make_external_data_model.py OUT.onnx [--layers N] [--report]
#        make_external_data_model.py OUT.onnx --shape gpt3-175b|gpt2-1.5b
#   gpt3-175b: the same decoder at GPT-3 175B's size (96 layers, width 12288,
#   96 heads, vocab 50257); the SwiGLU hidden 32768 gives the 3 x 12288 x
#   32768 MLP weights of GPT-3's 2 x 12288 x 49152, so ~175B parameters.
#
# Needs only the onnx package. The graph is built with onnx.helper the way
# torch.onnx lays out a Llama decoder (node names /model/layers.N/..., a bias-free
# Linear as Transpose + MatMul, RMSNorm, SwiGLU, untied head). Every weight is an
# initializer with data_location=EXTERNAL pointing into OUT.onnx.data by offset and
# length; that file is made by truncate, so it is sparse: no weight bytes are
# written and none is ever held in memory. The point is to check that frenzy-opt
# plans from the graph alone: it must import this in seconds and little memory.
import argparse
import collections
import os

import onnx
from onnx import TensorProto, helper

# Llama-2-7B: 32 layers, 32 heads, width 4096, SwiGLU hidden 11008, vocab 32000.
VOCAB, DIM, HEADS, FFN, LAYERS = 32000, 4096, 32, 11008, 32
# embed + head 2*32000*4096, per layer 4*4096^2 + 3*4096*11008 + 2*4096, final norm 4096.
LLAMA2_7B_PARAMS = 6_738_415_616


def build(layers, data_name, dims=(VOCAB, DIM, HEADS, FFN)):
    VOCAB, DIM, HEADS, FFN = dims
    nodes, inits = [], []
    offset = 0  # running byte offset into the side file
    count = 0

    def weight(name, shape):
        nonlocal offset, count
        n = 1
        for d in shape:
            n *= d
        # Only metadata: dims, type and where the bytes would be.
        t = TensorProto(name=name, data_type=TensorProto.FLOAT, dims=shape,
                        data_location=TensorProto.EXTERNAL)
        for k, v in (("location", data_name), ("offset", str(offset)), ("length", str(4 * n))):
            t.external_data.add(key=k, value=v)
        offset += 4 * n
        count += n
        inits.append(t)
        return name

    def node(op, inputs, name, out=None, **attrs):
        out = out or name + "_output_0"  # torch.onnx's value naming
        nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def const(name, value, dtype=TensorProto.INT64):
        dims = [len(value)] if isinstance(value, list) else []
        vals = value if isinstance(value, list) else [value]
        value = helper.make_tensor(name + "_value", dtype, dims, vals)
        return node("Constant", [], name, value=value)

    def rmsnorm(x, scope, w):
        # torch exports rsqrt as Div(1, Sqrt); Reciprocal(Sqrt) is the other
        # spelling the importer accepts, and only this model exercises it.
        two = const(scope + "/Constant", 2.0, TensorProto.FLOAT)
        m = node("ReduceMean", [node("Pow", [x, two], scope + "/Pow")], scope + "/ReduceMean",
                 axes=[-1], keepdims=1)
        eps = const(scope + "/Constant_1", 1e-5, TensorProto.FLOAT)
        s = node("Sqrt", [node("Add", [m, eps], scope + "/Add")], scope + "/Sqrt")
        r = node("Reciprocal", [s], scope + "/Reciprocal")
        return node("Mul", [node("Mul", [x, r], scope + "/Mul"), w], scope + "/Mul_1")

    def linear(x, scope, w, out=None):
        wt = node("Transpose", [w], scope + "/Transpose", perm=[1, 0])
        return node("MatMul", [x, wt], scope + "/MatMul", out)

    x = node("Gather", [weight("model.embed_tokens.weight", [VOCAB, DIM]), "input_ids"],
             "/model/embed_tokens/Gather")
    hd = DIM // HEADS
    # Reshape targets as constants; 0 copies batch/seq from the input.
    heads_shape = const("/model/Constant", [0, 0, HEADS, hd])
    flat_shape = const("/model/Constant_1", [0, 0, DIM])
    for i in range(layers):
        s, p = f"/model/layers.{i}", f"model.layers.{i}"
        h = rmsnorm(x, s + "/input_layernorm", weight(p + ".input_layernorm.weight", [DIM]))
        qkv = []
        for j, proj in enumerate(("q", "k", "v")):
            y = linear(h, f"{s}/self_attn/{proj}_proj",
                       weight(f"{p}.self_attn.{proj}_proj.weight", [DIM, DIM]))
            y = node("Reshape", [y, heads_shape], f"{s}/self_attn/Reshape" + (f"_{j}" if j else ""))
            qkv.append(node("Transpose", [y], f"{s}/self_attn/Transpose" + (f"_{j}" if j else ""),
                            perm=[0, 2, 1, 3]))
        q, k, v = qkv
        kt = node("Transpose", [k], f"{s}/self_attn/Transpose_3", perm=[0, 1, 3, 2])
        sc = node("MatMul", [q, kt], f"{s}/self_attn/MatMul")
        scale = const(f"{s}/self_attn/Constant", float(hd) ** 0.5, TensorProto.FLOAT)
        sm = node("Softmax", [node("Div", [sc, scale], f"{s}/self_attn/Div")],
                  f"{s}/self_attn/Softmax", axis=-1)
        o = node("MatMul", [sm, v], f"{s}/self_attn/MatMul_1")
        o = node("Transpose", [o], f"{s}/self_attn/Transpose_4", perm=[0, 2, 1, 3])
        o = node("Reshape", [o, flat_shape], f"{s}/self_attn/Reshape_3")
        o = linear(o, f"{s}/self_attn/o_proj", weight(f"{p}.self_attn.o_proj.weight", [DIM, DIM]))
        x = node("Add", [x, o], f"{s}/Add")
        h = rmsnorm(x, s + "/post_attention_layernorm",
                    weight(p + ".post_attention_layernorm.weight", [DIM]))
        g = linear(h, f"{s}/mlp/gate_proj", weight(f"{p}.mlp.gate_proj.weight", [FFN, DIM]))
        g = node("Mul", [g, node("Sigmoid", [g], f"{s}/mlp/act_fn/Sigmoid")], f"{s}/mlp/act_fn/Mul")
        u = linear(h, f"{s}/mlp/up_proj", weight(f"{p}.mlp.up_proj.weight", [FFN, DIM]))
        d = linear(node("Mul", [g, u], f"{s}/mlp/Mul"), f"{s}/mlp/down_proj",
                   weight(f"{p}.mlp.down_proj.weight", [DIM, FFN]))
        x = node("Add", [x, d], f"{s}/Add_1")
    x = rmsnorm(x, "/model/norm", weight("model.norm.weight", [DIM]))
    linear(x, "/lm_head", weight("lm_head.weight", [VOCAB, DIM]), out="logits")  # untied

    graph = helper.make_graph(
        nodes, "llama2_7b_shape",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", VOCAB])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="frenzy-make-external-data-model")
    return model, count, offset


def main():
    ap = argparse.ArgumentParser(description=__doc__.strip())
    ap.add_argument("out", help="model path; the weights go to OUT.data beside it")
    ap.add_argument("--layers", type=int, default=LAYERS, help="decoder layers (default 32)")
    ap.add_argument("--report", action="store_true", help="print op types and one layer's nodes")
    ap.add_argument("--shape", choices=["llama2-7b", "gpt3-175b", "gpt2-1.5b"], default="llama2-7b",
                    help="model size (default llama2-7b)")
    a = ap.parse_args()
    data_name = os.path.basename(a.out) + ".data"
    if a.shape == "gpt3-175b":
        layers = 96 if a.layers == LAYERS else a.layers
        model, count, size = build(layers, data_name, (50257, 12288, 96, 32768))
        a.layers = layers
    elif a.shape == "gpt2-1.5b":
        # GPT-2 XL's size in this Llama-style graph: 48 layers, width 1600,
        # 25 heads, vocab 50257; SwiGLU hidden 4266 gives GPT-2's 2 x 4 x 1600^2
        # MLP parameters per layer with three matrices (1.56 B in all).
        layers = 48 if a.layers == LAYERS else a.layers
        model, count, size = build(layers, data_name, (50257, 1600, 25, 4266))
        a.layers = layers
    else:
        model, count, size = build(a.layers, data_name)
    if a.shape == "llama2-7b" and a.layers == LAYERS:
        assert count == LLAMA2_7B_PARAMS, count
    with open(a.out, "wb") as f:
        f.write(model.SerializeToString())
    data = os.path.join(os.path.dirname(os.path.abspath(a.out)), data_name)
    with open(data, "wb") as f:
        f.truncate(size)  # sparse: the right size, no blocks written

    # The checker by path also resolves each external location next to the model.
    onnx.checker.check_model(a.out)
    onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    if a.report:
        g = model.graph
        print("ops:", dict(sorted(collections.Counter(n.op_type for n in g.node).items())))
        print("layer 0:", [n.name for n in g.node if n.name.startswith("/model/layers.0/")])
        print("initializers:", len(g.initializer), [t.name for t in g.initializer[:13]], "...")
    print(f"{a.out}: {count:,} parameters, {a.layers} layers, external data {data_name} "
          f"{size:,} bytes ({size / 2**30:.1f} GiB, sparse)")


if __name__ == "__main__":
    main()
