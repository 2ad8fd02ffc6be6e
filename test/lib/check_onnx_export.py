#!/usr/bin/env python3
"""Run an exported ONNX model in onnxruntime and compare with Frenzy (test
helper).

usage: check_onnx_export.py MODEL.onnx INPUTS_DIR FRENZY_DUMP_DIR TOL
Feeds every model input from INPUTS_DIR/NAME.bin (raw, the input's dtype
and the shape of the dumped outputs' leading dims), runs the model, and
compares each output with FRENZY_DUMP_DIR/NAME.bin (frenzy-launch --dump):
the largest absolute difference relative to the output's largest magnitude
must be within TOL. Dropouts exported in training mode are switched to
inference mode (as frenzy-opt --inference does), so both are deterministic.
"""
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper

TYPES = {"tensor(int64)": np.int64, "tensor(float)": np.float32,
         "tensor(int32)": np.int32}


def main():
    model, inputs, dump, tol = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    ort.set_default_logger_severity(3)
    m = onnx.load(model)
    m.graph.initializer.append(numpy_helper.from_array(np.array(False), "eval_mode_false"))
    for n in m.graph.node:
        if n.op_type == "Dropout" and len(n.input) > 2:
            n.input[2] = "eval_mode_false"
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    feed = {}
    for i in sess.get_inputs():
        data = np.fromfile(os.path.join(inputs, i.name + ".bin"), dtype=TYPES[i.type])
        feed[i.name] = data.reshape(-1, int(os.environ.get("SEQ", "64")))
    outs = sess.run(None, feed)
    ok = True
    for o, value in zip(sess.get_outputs(), outs):
        path = os.path.join(dump, o.name + ".bin")
        if not os.path.exists(path):
            continue
        ours = np.fromfile(path, dtype=np.float32).reshape(value.shape)
        err = float(np.abs(ours - value).max() / max(np.abs(value).max(), 1e-30))
        ok &= err <= tol
        print(f"{'ok' if err <= tol else 'FAIL'}: onnxruntime {ort.__version__} "
              f"output '{o.name}' {list(value.shape)}: relative difference {err:.2e}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
