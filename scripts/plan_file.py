#!/usr/bin/env python3
"""plan.bin's framing (proto/plan/PlanFile.h, docs/plan.md) from Python.

usage:
  plan_file.py payload PLAN OUT      write the protobuf bytes (no header) to OUT
  plan_file.py resign PLAN           recompute the header (length, checksum) in place
  plan_file.py frame PAYLOAD OUT     write OUT = header + PAYLOAD
  plan_file.py set-lr PLAN LR        (tests) re-sign PLAN with the optimizer's lr set

`resign` is for tests and the mutation bench, which alter a plan on purpose
and re-sign it so that the plan validator, not the checksum, must catch it.
"""
import struct
import subprocess
import sys
import tempfile
import os

MAGIC = b"FRZPLAN\n"
VERSION = 4
HEADER = 32


def fnv1a64(data):
    h = 1469598103934665603
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def frame(payload, version=VERSION):
    return MAGIC + struct.pack("<IIQQ", version, 0, len(payload), fnv1a64(payload)) + payload


def payload_of(data):
    if data[:8] != MAGIC:
        raise SystemExit("not a Frenzy plan (no plan header)")
    return data[HEADER:]


def plan_module(proto_dir):
    """The generated plan_pb2 module (protoc, as test/lib/print_schedule.py)."""
    out = tempfile.mkdtemp()
    subprocess.run(["protoc", f"-I{proto_dir}", f"--python_out={out}",
                    os.path.join(proto_dir, "plan.proto")], check=True)
    sys.path.insert(0, out)
    import plan_pb2
    return plan_pb2


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    cmd, path = sys.argv[1], sys.argv[2]
    data = open(path, "rb").read()
    if cmd == "payload":
        open(sys.argv[3], "wb").write(payload_of(data))
    elif cmd == "resign":
        version = struct.unpack("<I", data[8:12])[0] if len(data) >= 12 else VERSION
        open(path, "wb").write(frame(data[HEADER:], version))
    elif cmd == "frame":
        open(sys.argv[3], "wb").write(frame(data))
    elif cmd == "set-lr":
        pb = plan_module(os.path.join(os.path.dirname(__file__), "..", "proto"))
        plan = pb.Plan()
        plan.ParseFromString(payload_of(data))
        plan.optimizer.lr = float(sys.argv[3])
        open(path, "wb").write(frame(plan.SerializeToString()))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
