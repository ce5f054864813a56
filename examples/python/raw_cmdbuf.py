#!/usr/bin/python3
"""A raw command buffer with NumPy buffers: assemble examples/matmul.npuasm, run it on the
emulated device with the operands at their fixed device addresses, check the result against
NumPy, then run examples/race.npuasm under the synchronization checker.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/raw_cmdbuf.py [unix:SOCKET]

The optional argument runs on a device served by npu-daemon instead of the in-process
emulator (build/tools/npu-daemon/npu-daemon --socket /tmp/npu.sock &).
"""
import pathlib
import sys

import numpy as np

import npu

EXAMPLES = pathlib.Path(__file__).resolve().parents[1]
A, B, OUT = 0x100000000, 0x100010000, 0x100100000


def main():
    device = npu.Device(sys.argv[1] if len(sys.argv) > 1 else "emu:")
    info = device.info
    print(f"{info['name']} on {info['device']}: {info['sram_size'] >> 20} MiB SRAM, "
          f"{info['clock_hz'] / 1e9:g} GHz, engines " + ", ".join(e["name"] for e in info["engines"]))

    code = npu.assemble((EXAMPLES / "matmul.npuasm").read_text(), filename="matmul.npuasm",
                        validate=True)
    print(npu.disassemble(code))
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 8)).astype(np.float32)   # A [2][4][8]
    b = rng.standard_normal((6, 8)).astype(np.float32)      # B [6][8], used transposed
    result = device.submit(code, {A: a, B: b, OUT: 2 * 4 * 6 * 4}, read_only=[A, B])
    out = np.frombuffer(result.outputs[OUT], np.float32).reshape(2, 4, 6)
    print(result.report(stats=True))
    print("max |npu - numpy| =", np.abs(out - a @ b.T).max())

    race = npu.assemble((EXAMPLES / "race.npuasm").read_text(), filename="race.npuasm")
    checked = device.submit(race, {A: np.arange(256, dtype=np.uint8), OUT: 256}, racecheck=True)
    print(f"race.npuasm: {len(checked.hazards)} hazards")
    for h in checked.hazards:
        print("  " + h["text"])


if __name__ == "__main__":
    main()
