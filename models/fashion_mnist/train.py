#!/usr/bin/python3
"""Train a small CNN on Fashion-MNIST and export it to ONNX with sample inputs.

Reads Debian's dataset-fashion-mnist (/usr/share/datasets/fashion-mnist) with gzip+numpy,
trains on the CPU with fixed seeds, and writes next to this script:

  fashion_mnist.onnx     opset 13, input `image` float32 [N,1,28,28] in [0,1], output `logits` [N,10]
  calibration.npy        64 training images [64,1,28,28] float32 (int8 calibration)
  samples/image_K.npy    test images 0..7, each [1,1,28,28] float32
  samples/batch8.npy     the same 8 images as [8,1,28,28]
  samples/labels.txt     their true labels (index and class name)
  samples/expected_logits.npy  PyTorch's logits for batch8, [8,10] float32

Usage: models/fashion_mnist/train.py [--epochs N] [--threads T] [--data DIR] [--out DIR]
"""
import argparse
import gzip
import os
import random
import sys
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CLASSES = [
    "T-shirt/top", "Trouser", "Pullover", "Dress", "Coat",
    "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot",
]


def read_idx_images(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, n, rows, cols = np.frombuffer(data[:16], dtype=">u4")
    if magic != 2051:
        sys.exit(f"train.py: {path}: bad IDX image magic {magic}")
    return np.frombuffer(data[16:], dtype=np.uint8).reshape(int(n), 1, int(rows), int(cols))


def read_idx_labels(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, n = np.frombuffer(data[:8], dtype=">u4")
    if magic != 2049:
        sys.exit(f"train.py: {path}: bad IDX label magic {magic}")
    return np.frombuffer(data[8:], dtype=np.uint8).astype(np.int64)[: int(n)]


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 16, 3, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(16)
        self.conv2 = nn.Conv2d(16, 32, 3, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(32)
        self.fc1 = nn.Linear(32 * 7 * 7, 64)
        self.fc2 = nn.Linear(64, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.bn1(self.conv1(x))), 2)
        x = F.max_pool2d(F.relu(self.bn2(self.conv2(x))), 2)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return self.fc2(x)


def evaluate(model, x, y, batch=1000):
    model.eval()
    correct = 0
    with torch.no_grad():
        for i in range(0, len(x), batch):
            correct += (model(x[i:i + batch]).argmax(1) == y[i:i + batch]).sum().item()
    return correct / len(x)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    ap.add_argument("--out", default=here)
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)

    def load(split):
        imgs = read_idx_images(os.path.join(args.data, f"{split}-images-idx3-ubyte.gz"))
        labels = read_idx_labels(os.path.join(args.data, f"{split}-labels-idx1-ubyte.gz"))
        return torch.from_numpy(imgs.astype(np.float32) / 255.0), torch.from_numpy(labels)

    x_train, y_train = load("train")
    x_test, y_test = load("t10k")
    print(f"train {tuple(x_train.shape)}, test {tuple(x_test.shape)}")

    model = Net()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    steps_per_epoch = (len(x_train) + args.batch - 1) // args.batch
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=args.lr, total_steps=args.epochs * steps_per_epoch)
    gen = torch.Generator().manual_seed(0)
    t0 = time.time()
    for epoch in range(args.epochs):
        model.train()
        perm = torch.randperm(len(x_train), generator=gen)
        total_loss = 0.0
        for i in range(0, len(x_train), args.batch):
            idx = perm[i:i + args.batch]
            opt.zero_grad()
            loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
            loss.backward()
            opt.step()
            sched.step()
            total_loss += loss.item() * len(idx)
        acc = evaluate(model, x_test, y_test)
        print(f"epoch {epoch + 1}/{args.epochs}: loss {total_loss / len(x_train):.4f}, "
              f"test accuracy {acc * 100:.2f}% ({time.time() - t0:.0f} s)")

    model.eval()
    test_acc = evaluate(model, x_test, y_test)
    print(f"test accuracy: {test_acc * 100:.2f}%")

    # Export.
    os.makedirs(args.out, exist_ok=True)
    onnx_path = os.path.join(args.out, "fashion_mnist.onnx")
    torch.onnx.export(
        model, torch.zeros(1, 1, 28, 28), onnx_path,
        opset_version=13, input_names=["image"], output_names=["logits"],
        dynamic_axes={"image": {0: "N"}, "logits": {0: "N"}},
        do_constant_folding=True, training=torch.onnx.TrainingMode.EVAL)

    # Samples: the first 8 test images.
    sdir = os.path.join(args.out, "samples")
    os.makedirs(sdir, exist_ok=True)
    batch8 = x_test[:8].numpy().astype(np.float32)
    for k in range(8):
        np.save(os.path.join(sdir, f"image_{k}.npy"), np.ascontiguousarray(batch8[k:k + 1]))
    np.save(os.path.join(sdir, "batch8.npy"), np.ascontiguousarray(batch8))
    with torch.no_grad():
        logits = model(torch.from_numpy(batch8)).numpy().astype(np.float32)
    np.save(os.path.join(sdir, "expected_logits.npy"), logits)
    with open(os.path.join(sdir, "labels.txt"), "w") as f:
        f.write("# sample  true_index  true_class  pytorch_top1\n")
        for k in range(8):
            t = int(y_test[k])
            p = int(logits[k].argmax())
            f.write(f"image_{k}  {t}  {CLASSES[t]}  {p}\n")

    # Calibration set for int8 quantization: 64 training images, fixed seed.
    cal_idx = np.random.RandomState(1).choice(len(x_train), 64, replace=False)
    np.save(os.path.join(args.out, "calibration.npy"),
            np.ascontiguousarray(x_train[np.sort(cal_idx)].numpy().astype(np.float32)))

    # Check the exported graph against PyTorch with onnx's reference checker (structure only).
    import onnx
    m = onnx.load(onnx_path)
    onnx.checker.check_model(m)
    ops = sorted({n.op_type for n in m.graph.node})
    print(f"wrote {onnx_path} ({os.path.getsize(onnx_path)} bytes), ops: {', '.join(ops)}")
    print(f"wrote {sdir}/ (image_0..7.npy, batch8.npy, labels.txt, expected_logits.npy), "
          f"{os.path.join(args.out, 'calibration.npy')}")


if __name__ == "__main__":
    main()
