#!/usr/bin/python3
"""NumPy oracle for the recurrent ops' tests (tests/ops/recurrent_test.cpp): ONNX RNN, GRU and
LSTM written from the operator spec in float64, independent of the C++ implementation, with
the sequence_lens convention of ONNX Runtime (steps past a batch entry's length give zeros in
Y and keep its state; the reverse direction starts at its last valid step; length 0 gives a
zero final state). `--check` compares it with ONNX's own LSTM/GRU/RNN node test data and with
torch.nn.LSTM/GRU (when torch is installed); without it, prints the cases the C++ test embeds.
Run with /usr/bin/python3 (numpy, onnx, torch)."""
import argparse
import sys

import numpy as np

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}
DEFAULT_ACTS = {"RNN": ["Tanh"], "GRU": ["Sigmoid", "Tanh"], "LSTM": ["Sigmoid", "Tanh", "Tanh"]}


def act_fn(name, alpha, beta):
    n = name.lower()
    table = {
        "relu": (lambda x, a, b: np.maximum(x, 0), None, None),
        "tanh": (lambda x, a, b: np.tanh(x), None, None),
        "sigmoid": (lambda x, a, b: 1 / (1 + np.exp(-x)), None, None),
        "affine": (lambda x, a, b: a * x + b, 1.0, 0.0),
        "leakyrelu": (lambda x, a, b: np.where(x >= 0, x, a * x), 0.01, None),
        "thresholdedrelu": (lambda x, a, b: np.where(x > a, x, 0), 1.0, None),
        "scaledtanh": (lambda x, a, b: a * np.tanh(b * x), 1.0, 1.0),
        "hardsigmoid": (lambda x, a, b: np.clip(a * x + b, 0, 1), 0.2, 0.5),
        "elu": (lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1)), 1.0, None),
        "softsign": (lambda x, a, b: x / (1 + np.abs(x)), None, None),
        "softplus": (lambda x, a, b: np.log1p(np.exp(x)), None, None),
    }
    f, da, db = table[n]
    a = da if da is not None else 0.0
    b = db if db is not None else 0.0
    if da is not None and alpha:
        a = alpha.pop(0)
    if db is not None and beta:
        b = beta.pop(0)
    return lambda x: f(x, a, b)


def recurrent(op, X, W, R, B=None, seq_lens=None, h0=None, c0=None, P=None, direction="forward",
              layout=0, activations=None, alpha=None, beta=None, clip=None,
              linear_before_reset=0, input_forget=0):
    g = GATES[op]
    dirs = 2 if direction == "bidirectional" else 1
    X = np.asarray(X, np.float64)
    if layout == 1:
        X = X.transpose(1, 0, 2)
    seq, batch, _ = X.shape
    H = R.shape[-1]
    per = len(DEFAULT_ACTS[op])
    names = list(activations or DEFAULT_ACTS[op])
    if len(names) == per and dirs == 2:
        names = names * 2
    alpha, beta = list(alpha or []), list(beta or [])
    acts = [act_fn(n, alpha, beta) for n in names]
    if h0 is not None and layout == 1:
        h0 = h0.transpose(1, 0, 2)
    if c0 is not None and layout == 1:
        c0 = c0.transpose(1, 0, 2)
    lens = np.full(batch, seq) if seq_lens is None else np.asarray(seq_lens)
    Y = np.zeros((seq, dirs, batch, H))
    Yh = np.zeros((dirs, batch, H))
    Yc = np.zeros((dirs, batch, H))
    cl = (lambda v: np.clip(v, -clip, clip)) if clip else (lambda v: v)
    for d in range(dirs):
        rev = direction == "reverse" or d == 1
        f = acts[d * per:(d + 1) * per]
        w, r = W[d].astype(np.float64), R[d].astype(np.float64)
        b = np.zeros(2 * g * H) if B is None else B[d].astype(np.float64)
        wb, rb = b[:g * H], b[g * H:]
        p = np.zeros(3 * H) if P is None else P[d].astype(np.float64)
        for n in range(batch):
            h = np.zeros(H) if h0 is None else h0[d, n].astype(np.float64)
            c = np.zeros(H) if c0 is None else c0[d, n].astype(np.float64)
            L = int(lens[n])
            for s in range(L):
                t = L - 1 - s if rev else s
                x = X[t, n]
                if op == "RNN":
                    h = f[0](cl(x @ w.T + h @ r.T + wb + rb))
                elif op == "GRU":
                    xw = x @ w.T + wb
                    z = f[0](cl(xw[:H] + h @ r[:H].T + rb[:H]))
                    rr = f[0](cl(xw[H:2 * H] + h @ r[H:2 * H].T + rb[H:2 * H]))
                    if linear_before_reset:
                        hh = f[1](cl(xw[2 * H:] + rr * (h @ r[2 * H:].T + rb[2 * H:])))
                    else:
                        hh = f[1](cl(xw[2 * H:] + (rr * h) @ r[2 * H:].T + rb[2 * H:]))
                    h = (1 - z) * hh + z * h
                else:
                    gs = x @ w.T + h @ r.T + wb + rb
                    fg = f[0](cl(gs[2 * H:3 * H] + p[2 * H:] * c))
                    ig = 1 - fg if input_forget else f[0](cl(gs[:H] + p[:H] * c))
                    cc = f[1](cl(gs[3 * H:]))
                    c = fg * c + ig * cc
                    og = f[0](cl(gs[H:2 * H] + p[H:2 * H] * c))
                    h = og * f[2](cl(c))
                Y[t, d, n] = h
            if L > 0:
                Yh[d, n], Yc[d, n] = h, c
    if layout == 1:
        Y = Y.transpose(2, 0, 1, 3)
        Yh = Yh.transpose(1, 0, 2)
        Yc = Yc.transpose(1, 0, 2)
    return Y, Yh, Yc


def check_onnx_data():
    import glob
    import os

    import onnx
    from onnx import numpy_helper

    root = "/usr/include/onnx/backend/test/data/node"
    worst = 0.0
    for d in sorted(glob.glob(root + "/test_*")):
        name = os.path.basename(d)
        if not any(k in name for k in ("lstm", "gru", "rnn")):
            continue
        m = onnx.load(d + "/model.onnx")
        node = m.graph.node[0]
        attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
        for k in ("direction",):
            if k in attrs:
                attrs[k] = attrs[k].decode()
        if "activations" in attrs:
            attrs["activations"] = [a.decode() for a in attrs["activations"]]
        ins = {}
        for i, nm in enumerate(node.input):
            if nm:
                t = onnx.TensorProto()
                t.ParseFromString(open(f"{d}/test_data_set_0/input_{i}.pb", "rb").read())
                ins[i] = numpy_helper.to_array(t)
        kw = dict(B=ins.get(3), seq_lens=ins.get(4), h0=ins.get(5), c0=ins.get(6), P=ins.get(7))
        for k in ("direction", "layout", "activations", "clip", "linear_before_reset",
                  "input_forget"):
            if k in attrs:
                kw[k] = attrs[k]
        outs = recurrent(node.op_type, ins[0], ins[1], ins[2], **kw)
        k = 0  # the data files number the named outputs only
        for j, nm in enumerate(node.output):
            if not nm:
                continue
            t = onnx.TensorProto()
            t.ParseFromString(open(f"{d}/test_data_set_0/output_{k}.pb", "rb").read())
            k += 1
            want = numpy_helper.to_array(t)
            got = outs[j].reshape(want.shape)
            err = float(np.max(np.abs(got - want)))
            worst = max(worst, err)
            print(f"{name} output {j}: max |diff| {err:.2e}")
    return worst


def check_torch():
    import torch

    torch.manual_seed(0)
    worst = 0.0
    for kind in ("LSTM", "GRU", "RNN"):
        mod = getattr(torch.nn, kind)(3, 4, num_layers=1, bidirectional=True, batch_first=True)
        x = torch.randn(2, 5, 3)
        with torch.no_grad():
            y, st = mod(x)
        g = GATES[kind]
        H = 4
        # torch gate orders: LSTM i f g o -> ONNX i o f c; GRU r z n -> ONNX z r h.
        if kind == "LSTM":
            order = [0, 3, 1, 2]
        elif kind == "GRU":
            order = [1, 0, 2]
        else:
            order = [0]

        def reorder(m):
            m = m.detach().numpy()
            return np.concatenate([m[i * H:(i + 1) * H] for i in order], 0)

        W = np.stack([reorder(getattr(mod, "weight_ih_l0" + s)) for s in ("", "_reverse")])
        R = np.stack([reorder(getattr(mod, "weight_hh_l0" + s)) for s in ("", "_reverse")])
        B = np.stack([np.concatenate([reorder(getattr(mod, "bias_ih_l0" + s)),
                                      reorder(getattr(mod, "bias_hh_l0" + s))])
                      for s in ("", "_reverse")])
        Y, Yh, Yc = recurrent(kind, x.numpy(), W, R, B, direction="bidirectional", layout=1,
                              linear_before_reset=1 if kind == "GRU" else 0)
        want_y = y.numpy().reshape(2, 5, 2, H)
        err = float(np.max(np.abs(Y - want_y)))
        h = st[0] if kind == "LSTM" else st
        err = max(err, float(np.max(np.abs(Yh - h.numpy().transpose(1, 0, 2)))))
        if kind == "LSTM":
            err = max(err, float(np.max(np.abs(Yc - st[1].numpy().transpose(1, 0, 2)))))
        print(f"torch {kind} bidirectional batch_first: max |diff| {err:.2e}")
        worst = max(worst, err)
    return worst


def fmt(a):
    return "{" + ", ".join(f"{v:.9g}" for v in np.asarray(a, np.float64).ravel()) + "}"


def cases():
    """The oracle values recurrent_test.cpp embeds (inputs are arange-based, see the test)."""

    def ramp(shape, scale, offset=0.0):
        n = int(np.prod(shape))
        return (np.arange(n, dtype=np.float64) * scale + offset).reshape(shape).astype(np.float32)

    def inputs(op, dirs, seq=3, batch=2, inp=2, H=2):
        g = GATES[op]
        X = ramp((seq, batch, inp), 0.1, -0.3)
        W = ramp((dirs, g * H, inp), 0.05, -0.2)
        R = ramp((dirs, g * H, H), -0.04, 0.15)
        B = ramp((dirs, 2 * g * H), 0.02, -0.1)
        return X, W, R, B

    out = {}
    X, W, R, B = inputs("LSTM", 2)
    P = ramp((2, 6), 0.03, -0.05)
    h0 = ramp((2, 2, 2), 0.1, -0.1)
    c0 = ramp((2, 2, 2), -0.1, 0.2)
    out["lstm_bidir_lens"] = recurrent("LSTM", X, W, R, B, seq_lens=[3, 1], h0=h0, c0=c0, P=P,
                                       direction="bidirectional")
    out["lstm_clip_forget"] = recurrent("LSTM", X, W[:1], R[:1], B[:1], direction="reverse",
                                        clip=0.25, input_forget=1)
    X, W, R, B = inputs("GRU", 1)
    out["gru_lbr0"] = recurrent("GRU", X, W, R, B)
    out["gru_lbr1"] = recurrent("GRU", X, W, R, B, linear_before_reset=1)
    X, W, R, B = inputs("RNN", 2)
    out["rnn_acts"] = recurrent("RNN", X, W, R, B, direction="bidirectional",
                                activations=["Affine", "ScaledTanh"], alpha=[2.0, 0.5],
                                beta=[0.1, 3.0])
    for k, (y, yh, yc) in out.items():
        print(f"// {k}\nY {fmt(y)}\nY_h {fmt(yh)}\nY_c {fmt(yc)}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true")
    args = ap.parse_args()
    if args.check:
        worst = check_onnx_data()
        try:
            worst = max(worst, check_torch())
        except ImportError:
            print("torch not installed: skipped")
        print(f"worst {worst:.2e}")
        sys.exit(0 if worst < 1e-5 else 1)
    cases()
