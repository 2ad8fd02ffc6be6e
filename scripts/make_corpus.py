#!/usr/bin/env python3
"""Tokenise a text file into a Frenzy/llm.c token file (docs/data.md).

Byte-level tokenisation: every byte of the UTF-8 text is one token (0-255),
so any model with a vocabulary of at least 256 can train on the result and
no tokenizer files are needed. Deterministic.

usage: make_corpus.py TEXT OUT.bin
"""
import array
import struct
import sys

MAGIC, VERSION = 20240520, 1


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: make_corpus.py TEXT OUT.bin")
    src, dst = sys.argv[1], sys.argv[2]
    with open(src, "rb") as f:
        data = f.read()
    if not data:
        sys.exit(f"make_corpus.py: {src}: empty text")
    header = [MAGIC, VERSION, len(data)] + [0] * 253
    tokens = array.array("H", list(data))  # one uint16 per byte
    if sys.byteorder != "little":
        tokens.byteswap()
    with open(dst + ".tmp", "wb") as f:
        f.write(struct.pack("<256i", *header))
        f.write(tokens.tobytes())
    import os
    os.replace(dst + ".tmp", dst)
    print(f"make_corpus.py: {dst}: {len(data)} tokens (byte-level) from {src}")


if __name__ == "__main__":
    main()
