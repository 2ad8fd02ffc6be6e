#!/usr/bin/env python3
"""Writes a Llama-2-7B-shaped ONNX model whose weights are ONNX external data.

Usage: make_external_data_model.py OUT.onnx [--layers N]

The graph is built with onnx.helper in the shape torch.onnx gives a Llama
decoder (node names /model/layers.N/..., RMSNorm, SwiGLU, untied head). Every
weight is an initializer pointing into OUT.onnx.data with offset and length;
that file is created sparse (truncate), so nothing near 27 GB is written and
no weight is ever materialised. The point is to check that planning reads
only the graph: frenzy-opt must import it in seconds and little memory.
"""
import argparse
import os

import onnx
from onnx import TensorProto, helper

VOCAB, DIM, HEADS, FFN = 32000, 4096, 32, 11008


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=32)
    a = ap.parse_args()
    data_name = os.path.basename(a.out) + ".data"
    nodes, inits = [], []
    offset = [0]
    count = [0]

    def weight(name, shape):
        t = TensorProto()
        t.name, t.data_type = name, TensorProto.FLOAT
        t.dims.extend(shape)
        n = 1
        for d in shape:
            n *= d
        t.data_location = TensorProto.EXTERNAL
        for k, v in (("location", data_name), ("offset", str(offset[0])), ("length", str(4 * n))):
            e = t.external_data.add()
            e.key, e.value = k, v
        offset[0] += 4 * n
        count[0] += n
        inits.append(t)
        return name

    def node(op, inputs, name, **attrs):
        out = name + "_output_0"
        nodes.append(helper.make_node(op, inputs, [out], name=name, **attrs))
        return out

    def const(name, value, dtype=TensorProto.INT64):
        dims = [len(value)] if isinstance(value, list) else []
        vals = value if isinstance(value, list) else [value]
        return node("Constant", [], name, value=helper.make_tensor(name + "_v", dtype, dims, vals))

    def rmsnorm(x, scope, w):
        two = const(scope + "/Constant", 2.0, TensorProto.FLOAT)
        p = node("Pow", [x, two], scope + "/Pow")
        m = node("ReduceMean", [p], scope + "/ReduceMean", axes=[-1], keepdims=1)
        eps = const(scope + "/Constant_1", 1e-5, TensorProto.FLOAT)
        s = node("Sqrt", [node("Add", [m, eps], scope + "/Add")], scope + "/Sqrt")
        r = node("Reciprocal", [s], scope + "/Reciprocal")
        return node("Mul", [node("Mul", [x, r], scope + "/Mul"), w], scope + "/Mul_1")

    def linear(x, scope, w):
        wt = node("Transpose", [w], scope + "/Transpose", perm=[1, 0])
        return node("MatMul", [x, wt], scope + "/MatMul")

    x = node("Gather", [weight("model.embed_tokens.weight", [VOCAB, DIM]), "input_ids"],
             "/model/embed_tokens/Gather")
    hd = DIM // HEADS
    heads_shape = const("/model/Constant_heads", [0, 0, HEADS, hd])
    flat_shape = const("/model/Constant_flat", [0, 0, DIM])
    for i in range(a.layers):
        s = f"/model/layers.{i}"
        p = f"model.layers.{i}"
        h = rmsnorm(x, s + "/input_layernorm", weight(p + ".input_layernorm.weight", [DIM]))
        qkv = []
        for proj in ("q", "k", "v"):
            y = linear(h, f"{s}/self_attn/{proj}_proj", weight(f"{p}.self_attn.{proj}_proj.weight", [DIM, DIM]))
            y = node("Reshape", [y, heads_shape], f"{s}/self_attn/Reshape_{proj}")
            qkv.append(node("Transpose", [y], f"{s}/self_attn/Transpose_{proj}", perm=[0, 2, 1, 3]))
        q, k, v = qkv
        kt = node("Transpose", [k], f"{s}/self_attn/Transpose_kt", perm=[0, 1, 3, 2])
        sc = node("MatMul", [q, kt], f"{s}/self_attn/MatMul")
        scale = const(f"{s}/self_attn/Constant", float(hd) ** 0.5, TensorProto.FLOAT)
        sm = node("Softmax", [node("Div", [sc, scale], f"{s}/self_attn/Div")], f"{s}/self_attn/Softmax", axis=-1)
        o = node("MatMul", [sm, v], f"{s}/self_attn/MatMul_1")
        o = node("Transpose", [o], f"{s}/self_attn/Transpose_o", perm=[0, 2, 1, 3])
        o = node("Reshape", [o, flat_shape], f"{s}/self_attn/Reshape_o")
        o = linear(o, f"{s}/self_attn/o_proj", weight(f"{p}.self_attn.o_proj.weight", [DIM, DIM]))
        x = node("Add", [x, o], f"{s}/Add")
        h = rmsnorm(x, s + "/post_attention_layernorm", weight(p + ".post_attention_layernorm.weight", [DIM]))
        g = linear(h, f"{s}/mlp/gate_proj", weight(f"{p}.mlp.gate_proj.weight", [FFN, DIM]))
        g = node("Mul", [g, node("Sigmoid", [g], f"{s}/mlp/act_fn/Sigmoid")], f"{s}/mlp/act_fn/Mul")
        u = linear(h, f"{s}/mlp/up_proj", weight(f"{p}.mlp.up_proj.weight", [FFN, DIM]))
        d = linear(node("Mul", [g, u], f"{s}/mlp/Mul"), f"{s}/mlp/down_proj",
                   weight(f"{p}.mlp.down_proj.weight", [DIM, FFN]))
        x = node("Add", [x, d], f"{s}/Add_1")
    x = rmsnorm(x, "/model/norm", weight("model.norm.weight", [DIM]))
    logits = linear(x, "/lm_head", weight("lm_head.weight", [VOCAB, DIM]))
    nodes.append(helper.make_node("Identity", [logits], ["logits"], name="/Identity"))

    graph = helper.make_graph(
        nodes, "llama2_7b_shape",
        [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch", "seq"])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", "seq", VOCAB])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)],
                              producer_name="frenzy-make-external-data-model")
    with open(a.out, "wb") as f:
        f.write(model.SerializeToString())
    data = os.path.join(os.path.dirname(os.path.abspath(a.out)), data_name)
    with open(data, "wb") as f:
        f.truncate(offset[0])  # sparse: the bytes are never read
    print(f"{a.out}: {count[0]:,} parameters, {a.layers} layers, external data "
          f"{offset[0] / 2**30:.1f} GiB (sparse)")


if __name__ == "__main__":
    main()
