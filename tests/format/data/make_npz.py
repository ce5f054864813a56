#!/usr/bin/env python3
"""Writes savez.npz and savez_compressed.npz exactly as NumPy's np.savez / np.savez_compressed
do (zipfile.ZipFile(allowZip64=True), one `zipf.open(KEY + ".npy", "w", force_zip64=True)` per
array, .npy version 1.0 headers), with the Python standard library only, so the fixtures need
no NumPy. npz_test.cpp reads them. Arrays:
  x   float32 (2, 3)  0.5 * [0 .. 5]
  idx int64   (4,)    [1, -2, 3, -4]
  q   int8    ()      -7
"""
import struct
import sys
import zipfile
from pathlib import Path


def npy(descr, shape, payload):
    shape_text = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + payload


ARRAYS = {
    "x": npy("<f4", (2, 3), struct.pack("<6f", *[0.5 * i for i in range(6)])),
    "idx": npy("<i8", (4,), struct.pack("<4q", 1, -2, 3, -4)),
    "q": npy("|i1", (), struct.pack("<b", -7)),
}

out = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent)
for file, method in (("savez.npz", zipfile.ZIP_STORED), ("savez_compressed.npz", zipfile.ZIP_DEFLATED)):
    with zipfile.ZipFile(out / file, mode="w", compression=method, allowZip64=True) as z:
        for key, data in ARRAYS.items():
            with z.open(key + ".npy", "w", force_zip64=True) as f:
                f.write(data)
