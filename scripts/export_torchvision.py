#!/usr/bin/python3
"""Export torchvision architectures with fixed random weights to ONNX, with input and expected output.

For each model M (resnet18, mobilenet_v2, squeezenet1_1 by default) writes:

  OUTDIR/M/model.onnx     opset 13, input `input` float32 [1,3,224,224], output `output` [1,1000]
  OUTDIR/M/input.npy      random input (fixed seed), float32 [1,3,224,224]
  OUTDIR/M/expected.npy   PyTorch's output for it, float32 [1,1000]

M may also be one of the architectures beyond classifiers (issue 13), each with its own input,
output and opset (see BEYOND below): lraspp_mobilenet_v3_large and deeplabv3_mobilenet_v3_large
(torchvision segmentation, bilinear Resize heads, output [1,21,224,224]), unet (a small U-Net:
ConvTranspose upsampling and skip concatenations), lstm_classifier, gru_classifier and
rnn_classifier (2-layer bidirectional recurrent classifiers, batch_first, opset 14), transformer_block (two
TransformerEncoderLayers with GELU and a final LayerNorm, exported at opset 17 so LayerNorm is
one LayerNormalization node), vit_small (a 2-layer pre-norm Vision Transformer on 64x64 images,
8x8 patches, class token, output [1,10]) and gpt_decoder (a 2-layer GPT-style causal decoder:
input int64 token ids [1,16] in [0,256), output logits [1,16,256]), both at opset 17.
  OUTDIR/M/torch_ms.txt   median wall time of one PyTorch CPU inference in ms (--threads threads)
  OUTDIR/M/ops.txt        the ONNX operator types used, with counts

Weights are torchvision's default initialization under torch.manual_seed(0) (weights=None);
biases that default to zero get small random values (fixed seed).
BatchNormalization layers get non-trivial parameters from a fixed seed: random gamma/beta,
running statistics measured on random data and then perturbed, so that BN folding changes the
numbers while activations stay in a sane range. By default BN is kept as BatchNormalization
nodes in the ONNX file (so the compiler's own folding is exercised); --fold-bn lets the PyTorch
exporter fold it into the convolutions instead (what a plain eval-mode export does).

Usage: scripts/export_torchvision.py OUTDIR [--models resnet18,mobilenet_v2,squeezenet1_1]
                                            [--threads 1] [--fold-bn] [--runs 10] [--opset N]
"""
import argparse
import os
import sys
import time
import warnings
from collections import Counter

import numpy as np
import torch
import torchvision

MODELS = ["resnet18", "mobilenet_v2", "squeezenet1_1"]


class UNet(torch.nn.Module):
    """A small U-Net: two 2x2 max-pool downsamplings, ConvTranspose (stride 2) upsamplings, skip
    concatenations, BatchNorm and ReLU; 3 input channels, 4 output classes per pixel."""

    def __init__(self):
        super().__init__()
        nn = torch.nn

        def block(cin, cout):
            return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout),
                                 nn.ReLU(), nn.Conv2d(cout, cout, 3, padding=1), nn.ReLU())

        self.enc1, self.enc2, self.mid = block(3, 16), block(16, 32), block(32, 64)
        self.pool = nn.MaxPool2d(2)
        self.up2 = nn.ConvTranspose2d(64, 32, 2, stride=2)
        self.dec2 = block(64, 32)
        self.up1 = nn.ConvTranspose2d(32, 16, 3, stride=2, padding=1, output_padding=1)
        self.dec1 = block(32, 16)
        self.head = nn.Conv2d(16, 4, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        m = self.mid(self.pool(e2))
        d2 = self.dec2(torch.cat([self.up2(m), e2], 1))
        d1 = self.dec1(torch.cat([self.up1(d2), e1], 1))
        return self.head(d1)


class RecurrentClassifier(torch.nn.Module):
    """A 2-layer bidirectional LSTM, GRU or RNN over [batch, time, features], classified from
    the last time step's output."""

    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(32, 48, num_layers=2, batch_first=True, bidirectional=True)
        self.fc = torch.nn.Linear(96, 10)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.fc(y[:, -1, :])


class TransformerBlock(torch.nn.Module):
    """Two post-norm TransformerEncoderLayers (GELU feed-forward) and a final LayerNorm."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(64, 4, dim_feedforward=128, dropout=0.0,
                                                 activation="gelu", batch_first=True)
        self.encoder = torch.nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(64)

    def forward(self, x):
        return self.norm(self.encoder(x))


def distinct_layers(encoder):
    """nn.TransformerEncoder deep-copies one layer, so every layer starts with the same weights:
    re-initialize each layer (under the caller's seed) so the layers differ, and give the
    attention's Q/K/V input-projection bias (zero by default) small random values."""
    for layer in encoder.layers:
        for m in layer.modules():
            if isinstance(m, torch.nn.MultiheadAttention):
                m._reset_parameters()
                with torch.no_grad():
                    m.in_proj_bias.uniform_(-0.1, 0.1)
            elif m is not layer and hasattr(m, "reset_parameters"):
                m.reset_parameters()


class VisionTransformer(torch.nn.Module):
    """A small ViT: 64x64x3 image, 8x8 patches embedded by a strided Conv2d (64 patches of dim
    64), a class token, learned positional embedding, 2 pre-norm encoder layers (4 heads, MLP
    128, GELU), a final LayerNorm and a 10-class linear head on the class token."""

    def __init__(self, image=64, patch=8, dim=64, heads=4, mlp=128, layers=2, classes=10):
        super().__init__()
        nn = torch.nn
        self.patch_embed = nn.Conv2d(3, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, (image // patch) ** 2 + 1, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=mlp, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        distinct_layers(self.encoder)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        x = self.patch_embed(x).flatten(2).transpose(1, 2)  # [N, patches, dim]
        x = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), x], 1) + self.pos_embed
        return self.head(self.norm(self.encoder(x))[:, 0])


class GPTDecoder(torch.nn.Module):
    """A GPT-style decoder-only language model: int64 token ids [N, T], token + learned
    position embeddings, 2 pre-norm causal self-attention blocks (4 heads, MLP 256, GELU), a
    final LayerNorm and an LM head (no bias) to vocabulary logits [N, T, vocab]. The causal
    mask is a constant additive [T, T] buffer (-inf above the diagonal): torch 1.13 has no
    is_causal."""

    def __init__(self, vocab=256, tokens=16, dim=64, heads=4, mlp=256, layers=2):
        super().__init__()
        nn = torch.nn
        self.tok_embed = nn.Embedding(vocab, dim)
        self.pos_embed = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(dim, heads, dim_feedforward=mlp, dropout=0.0,
                                           activation="gelu", batch_first=True, norm_first=True)
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        distinct_layers(self.blocks)
        self.norm = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.register_buffer(
            "causal_mask", torch.triu(torch.full((tokens, tokens), float("-inf")), diagonal=1))

    def forward(self, ids):
        x = self.tok_embed(ids) + self.pos_embed[:, :ids.shape[1]]
        x = self.blocks(x, mask=self.causal_mask[:ids.shape[1], :ids.shape[1]])
        return self.lm_head(self.norm(x))


class OutputOf(torch.nn.Module):
    """torchvision's segmentation models return a dict: export its "out" entry."""

    def __init__(self, model, key):
        super().__init__()
        self.model, self.key = model, key

    def forward(self, x):
        return self.model(x)[self.key]


def segmentation(name):
    ctor = getattr(torchvision.models.segmentation, name)
    return OutputOf(ctor(weights=None, weights_backbone=None, num_classes=21), "out")


# name -> (constructor, input shape, opset)
BEYOND = {
    "lraspp_mobilenet_v3_large": (lambda: segmentation("lraspp_mobilenet_v3_large"),
                                  (1, 3, 224, 224), 13),
    "deeplabv3_mobilenet_v3_large": (lambda: segmentation("deeplabv3_mobilenet_v3_large"),
                                     (1, 3, 224, 224), 13),
    "unet": (UNet, (1, 3, 64, 64), 13),
    "lstm_classifier": (lambda: RecurrentClassifier(torch.nn.LSTM), (2, 16, 32), 14),
    "gru_classifier": (lambda: RecurrentClassifier(torch.nn.GRU), (2, 16, 32), 14),
    "rnn_classifier": (lambda: RecurrentClassifier(torch.nn.RNN), (2, 16, 32), 14),
    "transformer_block": (TransformerBlock, (1, 16, 64), 17),
    "vit_small": (VisionTransformer, (1, 3, 64, 64), 17),
    "gpt_decoder": (GPTDecoder, (1, 16), 17),
}

# Models whose input is int64 token ids rather than a float tensor: name -> vocabulary size.
TOKEN_INPUTS = {"gpt_decoder": 256}


def make_input(name, shape, generator):
    """The fixed random input: standard normal floats, or for TOKEN_INPUTS models int64 ids
    uniform in [0, vocabulary)."""
    if name in TOKEN_INPUTS:
        return torch.randint(0, TOKEN_INPUTS[name], tuple(shape), generator=generator,
                             dtype=torch.int64)
    return torch.empty(shape).normal_(0.0, 1.0, generator=generator)


def randomize_norm_affine(model, seed):
    """LayerNorm initializes gamma to 1 and beta to 0: give them random values, so the affine
    part is tested too."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, torch.nn.LayerNorm) and m.elementwise_affine:
                m.weight.copy_(torch.empty(m.weight.shape).uniform_(0.5, 1.5, generator=g))
                m.bias.copy_(torch.empty(m.bias.shape).normal_(0.0, 0.1, generator=g))


def randomize_bn(model, seed, shape):
    """Give every BatchNorm non-trivial gamma/beta/running stats, deterministically."""
    bns = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    if not bns:
        return 0
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for bn in bns:
            c = bn.num_features
            bn.weight.copy_(torch.empty(c).uniform_(0.5, 1.5, generator=g))
            bn.bias.copy_(torch.empty(c).normal_(0.0, 0.1, generator=g))
        # Running statistics from real activations (cumulative average over one batch of
        # random images), so the network's activations neither explode nor vanish ...
        saved = [(bn.momentum, bn.training) for bn in bns]
        for bn in bns:
            bn.reset_running_stats()
            bn.momentum = None
        model.train()
        model(torch.empty((4,) + tuple(shape[1:])).normal_(0.0, 1.0, generator=g))
        model.eval()
        for bn, (momentum, _) in zip(bns, saved):
            bn.momentum = momentum
            # ... then perturbed so they differ from the batch statistics.
            c = bn.num_features
            std = bn.running_var.sqrt()
            bn.running_mean.add_(torch.empty(c).normal_(0.0, 0.2, generator=g) * std)
            bn.running_var.mul_(torch.empty(c).uniform_(0.7, 1.4, generator=g))
    return len(bns)


def randomize_zero_biases(model, seed):
    """torchvision initializes conv/linear biases to zero: make them small random values so they
    are tested too (and so the exporter does not merge identical initializers into Identity)."""
    g = torch.Generator().manual_seed(seed)
    n = 0
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (torch.nn.Conv2d, torch.nn.ConvTranspose2d, torch.nn.Linear)) \
                    and m.bias is not None \
                    and not m.bias.any():
                m.bias.copy_(torch.empty(m.bias.shape).uniform_(-0.1, 0.1, generator=g))
                n += 1
    return n


def build_model(name):
    """The model as exported: fixed random weights, non-trivial norms. Returns (model, input
    shape, opset, BatchNorms randomized); bench/vs_pytorch.py times the same model."""
    torch.manual_seed(0)
    if name in BEYOND:
        ctor, shape, opset = BEYOND[name]
        model = ctor()
    else:
        model, shape, opset = getattr(torchvision.models, name)(weights=None), (1, 3, 224, 224), 13
    model.eval()
    randomize_zero_biases(model, seed=3)
    randomize_norm_affine(model, seed=4)
    n_bn = randomize_bn(model, seed=1, shape=shape)
    model.eval()
    return model, shape, opset, n_bn


def export_onnx(model, x, path, opset, keep_bn=True):
    """Exports `model` (in eval mode) on the example input `x` to `path`: input `input`,
    output `output`. keep_bn: PRESERVE keeps BatchNormalization nodes (inference form); EVAL
    makes the exporter fold them into the preceding Conv. Also used by
    examples/python/torchvision_precisions.py and bench/python_overhead.py."""
    training = torch.onnx.TrainingMode.PRESERVE if keep_bn else torch.onnx.TrainingMode.EVAL
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*constant folding.*")
        torch.onnx.export(model, x, str(path), opset_version=opset,
                          input_names=["input"], output_names=["output"],
                          do_constant_folding=True, training=training)


def export_one(name, outdir, args):
    t0 = time.time()
    model, shape, opset, n_bn = build_model(name)
    opset = args.opset or opset

    x = make_input(name, shape, torch.Generator().manual_seed(2))
    with torch.no_grad():
        y = model(x)
        # PyTorch CPU inference time: warm-up, then the median of --runs runs.
        for _ in range(2):
            model(x)
        times = []
        for _ in range(args.runs):
            s = time.perf_counter()
            model(x)
            times.append((time.perf_counter() - s) * 1e3)
    torch_ms = float(np.median(times))

    d = os.path.join(outdir, name)
    os.makedirs(d, exist_ok=True)
    onnx_path = os.path.join(d, "model.onnx")
    export_onnx(model, x, onnx_path, opset, keep_bn=n_bn > 0 and not args.fold_bn)
    x_np = x.numpy() if x.dtype == torch.int64 else x.numpy().astype(np.float32)
    np.save(os.path.join(d, "input.npy"), np.ascontiguousarray(x_np))
    np.save(os.path.join(d, "expected.npy"), np.ascontiguousarray(y.numpy().astype(np.float32)))
    with open(os.path.join(d, "torch_ms.txt"), "w") as f:
        f.write(f"{torch_ms:.3f}\n")

    import onnx
    m = onnx.load(onnx_path)
    onnx.checker.check_model(m)
    ops = Counter(n.op_type for n in m.graph.node)
    with open(os.path.join(d, "ops.txt"), "w") as f:
        for op, k in sorted(ops.items()):
            f.write(f"{op} {k}\n")
    print(f"{name}: {os.path.getsize(onnx_path) / 1e6:.1f} MB, {n_bn} BN layers, "
          f"ops {dict(sorted(ops.items()))}, output [{y.abs().max().item():.3g} max abs], "
          f"torch {torch_ms:.2f} ms/inference ({torch.get_num_threads()} threads), "
          f"export {time.time() - t0:.1f} s", flush=True)


def to_float16(model_dir):
    """Rewrites model.onnx with every float32 tensor as float16 (initializers, Constant
    values, graph inputs/outputs/value_info, Cast targets) and input.npy as float16."""
    import numpy as np
    import onnx
    from onnx import TensorProto, numpy_helper
    path = os.path.join(model_dir, "model.onnx")
    m = onnx.load(path)
    g = m.graph

    def half(t):
        if t.data_type == TensorProto.FLOAT:
            t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))

    for t in g.initializer:
        half(t)
    for vi in list(g.input) + list(g.output) + list(g.value_info):
        if vi.type.tensor_type.elem_type == TensorProto.FLOAT:
            vi.type.tensor_type.elem_type = TensorProto.FLOAT16
    for n in g.node:
        for a in n.attribute:
            if a.type == onnx.AttributeProto.TENSOR:
                half(a.t)
            if n.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    onnx.save(m, path)
    x = np.load(os.path.join(model_dir, "input.npy"))
    np.save(os.path.join(model_dir, "input.npy"), x.astype(np.float16))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir")
    ap.add_argument("--models", default=",".join(MODELS),
                    help="comma-separated torchvision model names (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=1,
                    help="PyTorch CPU threads for the timing (default: %(default)s)")
    ap.add_argument("--runs", type=int, default=10, help="timed inferences (default: %(default)s)")
    ap.add_argument("--fold-bn", action="store_true",
                    help="let the exporter fold BatchNormalization into Conv")
    ap.add_argument("--opset", type=int, default=0,
                    help="export every model at this opset instead of its own (e.g. 13 for "
                         "transformer_block: LayerNorm as its ReduceMean/Sub/Pow/Sqrt/Div "
                         "formula, which the compiler's fuse-layernorm pass fuses back)")
    ap.add_argument("--float16", action="store_true",
                    help="convert model.onnx and input.npy to float16 after the export "
                         "(expected.npy stays PyTorch's float32 result)")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    failed = []
    for name in [m for m in args.models.split(",") if m]:
        if name not in BEYOND and not hasattr(torchvision.models, name):
            sys.exit(f"export_torchvision.py: unknown torchvision model '{name}'")
        try:
            export_one(name, args.outdir, args)
            if args.float16:
                to_float16(os.path.join(args.outdir, name))
        except Exception as e:  # keep going; report at the end
            print(f"export_torchvision.py: {name}: export failed: {e}", file=sys.stderr)
            failed.append(name)
    if failed:
        sys.exit(f"export_torchvision.py: failed: {', '.join(failed)}")


if __name__ == "__main__":
    main()
