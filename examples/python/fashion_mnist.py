#!/usr/bin/python3
"""Quick start: compile the shipped Fashion-MNIST classifier, classify the sample images on the
emulated NPU, compare float and int8, and draw the roofline of the run.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/fashion_mnist.py [OUT_DIR]

Writes OUT_DIR/fashion_mnist_{fp32,int8}.png (default OUT_DIR: the current directory) and
OUT_DIR/fashion_mnist.trace.json (open it in ui.perfetto.dev). Needs numpy, and matplotlib for
the pictures.
"""
import pathlib
import sys

import numpy as np

import npu

ROOT = pathlib.Path(__file__).resolve().parents[2]
FM = ROOT / "models" / "fashion_mnist"
CLASSES = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker",
           "Bag", "Ankle boot"]


def main():
    out = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    out.mkdir(parents=True, exist_ok=True)
    images = np.load(FM / "samples" / "batch8.npy")
    labels = [int(line.split()[1]) for line in (FM / "samples" / "labels.txt").read_text()
              .splitlines() if line and not line.startswith("#")]

    fp32 = npu.compile(FM / "fashion_mnist.onnx")
    print(fp32.partition)
    print(fp32.report_text())
    int8 = npu.compile(FM / "fashion_mnist.onnx", quantize="int8",
                       calibration=np.load(FM / "calibration.npy"))

    for name, package in (("fp32", fp32), ("int8", int8)):
        with npu.Session(package) as session:
            session.run({"image": images})  # the first run also builds the command buffers
            logits = session.run({"image": images})["logits"]
            st = session.last_stats
            predicted = logits.argmax(axis=1)
            print(f"\n{name}: {(predicted == labels).sum()}/8 right, "
                  f"{st.cycles // len(images)} cycles per image, host {st.host_ms:.2f} ms")
            for k, (p, t) in enumerate(zip(predicted, labels)):
                print(f"  image_{k}: {CLASSES[p]:<12} (true: {CLASSES[t]})")
            print("  engines: " + ", ".join(f"{e} {u:.0%}" for e, u in st.engines.items()))
            try:
                npu.plot.summary(session, out / f"fashion_mnist_{name}.png",
                                 title=f"Fashion-MNIST, {name}, batch 8")
                print(f"  wrote {out / f'fashion_mnist_{name}.png'}")
            except npu.Error as e:  # no matplotlib
                print(f"  no picture: {e}")
            if name == "fp32":
                session.write_trace(out / "fashion_mnist.trace.json")


if __name__ == "__main__":
    main()
