"""PyTorch models exported to ONNX for Hexir's end-to-end tests.

Each model has a fixed seed and random weights; biases and normalization parameters get noise
(torchvision initializes them to 0 and 1), so a dropped bias or a mishandled BatchNorm changes
the output. Input resolution is kept small: these test the importer, not the kernels' speed.
"""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def _perturb(model, seed):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, (nn.BatchNorm2d, nn.BatchNorm1d, nn.LayerNorm, nn.GroupNorm)):
                if module.weight is not None:
                    module.weight.copy_(1.0 + 0.2 * torch.randn(module.weight.shape, generator=g))
                    module.bias.copy_(0.1 * torch.randn(module.bias.shape, generator=g))
                if getattr(module, "running_mean", None) is not None:
                    module.running_mean.copy_(0.1 * torch.randn(module.running_mean.shape, generator=g))
                    module.running_var.copy_(1.0 + 0.2 * torch.rand(module.running_var.shape, generator=g))
            elif isinstance(module, (nn.Conv2d, nn.Linear)) and module.bias is not None:
                module.bias.add_(0.05 * torch.randn(module.bias.shape, generator=g))
    return model


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(nn.Flatten(), nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 512), nn.ReLU(),
                                 nn.Linear(512, 10))

    def forward(self, x):
        return self.net(x)


class BertLike(nn.Module):
    """Token ids -> embeddings (Gather) -> nn.TransformerEncoder -> pooled logits."""

    def __init__(self, vocab=1000, d=64, heads=4, layers=2, seq=16, ff=128):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Parameter(0.02 * torch.randn(1, seq, d))
        layer = nn.TransformerEncoderLayer(d, heads, dim_feedforward=ff, dropout=0.1, activation="gelu",
                                           batch_first=True)
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d)
        self.head = nn.Linear(d, 3)

    def forward(self, ids):
        h = self.tok(ids) + self.pos
        h = self.norm(self.encoder(h))
        return self.head(h[:, 0])


class LlamaLike(nn.Module):
    """A Llama-style decoder: RMSNorm, rotary position embeddings computed in the graph (the
    positions from the token ids' shape by CumSum, as Hugging Face derives them from the
    attention mask, then Sin and Cos at run time), grouped-query causal attention and a SwiGLU
    MLP."""

    def __init__(self, vocab=1000, d=64, heads=4, kv_heads=2, layers=2, ff=172):
        super().__init__()
        self.heads, self.kv_heads, self.hd = heads, kv_heads, d // heads
        self.tok = nn.Embedding(vocab, d)
        self.layers = nn.ModuleList()
        for _ in range(layers):
            self.layers.append(nn.ModuleDict({
                "n1": _RmsNorm(d), "q": nn.Linear(d, d, bias=False), "k": nn.Linear(d, kv_heads * self.hd, bias=False),
                "v": nn.Linear(d, kv_heads * self.hd, bias=False), "o": nn.Linear(d, d, bias=False),
                "n2": _RmsNorm(d), "gate": nn.Linear(d, ff, bias=False), "up": nn.Linear(d, ff, bias=False),
                "down": nn.Linear(ff, d, bias=False)}))
        self.norm = _RmsNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.register_buffer("inv_freq", 1.0 / (10000 ** (torch.arange(0, self.hd, 2).float() / self.hd)))

    @staticmethod
    def _rotate(x, cos, sin):
        x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
        return x * cos + torch.cat((-x2, x1), dim=-1) * sin

    def forward(self, ids):
        b, t = ids.shape
        pos = (torch.cumsum(torch.ones_like(ids), dim=1) - 1).float()  # [b, t], at run time
        freqs = pos[..., None] * self.inv_freq  # [b, t, hd/2]
        emb = torch.cat((freqs, freqs), dim=-1)[:, None]  # [b, 1, t, hd]
        cos, sin = emb.cos(), emb.sin()
        mask = torch.full((t, t), float("-inf")).triu(1)
        h = self.tok(ids)
        for layer in self.layers:
            x = layer["n1"](h)
            q = layer["q"](x).view(b, t, self.heads, self.hd).transpose(1, 2)
            k = layer["k"](x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
            v = layer["v"](x).view(b, t, self.kv_heads, self.hd).transpose(1, 2)
            q, k = self._rotate(q, cos, sin), self._rotate(k, cos, sin)
            rep = self.heads // self.kv_heads
            k, v = k.repeat_interleave(rep, dim=1), v.repeat_interleave(rep, dim=1)
            att = torch.softmax(q @ k.transpose(-1, -2) / self.hd ** 0.5 + mask, dim=-1)
            h = h + layer["o"]((att @ v).transpose(1, 2).reshape(b, t, -1))
            x = layer["n2"](h)
            h = h + layer["down"](F.silu(layer["gate"](x)) * layer["up"](x))
        return self.head(self.norm(h))


class _RmsNorm(nn.Module):
    def __init__(self, d, eps=1e-6):
        super().__init__()
        self.weight, self.eps = nn.Parameter(torch.ones(d)), eps

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


class UNet(nn.Module):
    """A small UNet: two down blocks (conv-BN-ReLU pairs, max pooling), a bottleneck, and two up
    blocks, one upsampling by ConvTranspose (stride 2), one by bilinear Resize, each joined to
    its skip connection by Concat."""

    def __init__(self, c=8):
        super().__init__()

        def block(i, o):
            return nn.Sequential(nn.Conv2d(i, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU(),
                                 nn.Conv2d(o, o, 3, padding=1), nn.BatchNorm2d(o), nn.ReLU())
        self.d1, self.d2, self.mid = block(3, c), block(c, 2 * c), block(2 * c, 4 * c)
        self.up2 = nn.ConvTranspose2d(4 * c, 2 * c, 2, stride=2)
        self.u2 = block(4 * c, 2 * c)
        self.reduce1 = nn.Conv2d(2 * c, c, 1)
        self.u1 = block(2 * c, c)
        self.out = nn.Conv2d(c, 2, 1)

    def forward(self, x):
        s1 = self.d1(x)
        s2 = self.d2(F.max_pool2d(s1, 2))
        m = self.mid(F.max_pool2d(s2, 2))
        y = self.u2(torch.cat([self.up2(m), s2], dim=1))
        y = F.interpolate(self.reduce1(y), scale_factor=2, mode="bilinear", align_corners=False)
        y = self.u1(torch.cat([y, s1], dim=1))
        return self.out(y)


def _decoder_blocks(d, layers):
    """GPT-2's blocks: layer norms, the attention's qkv and output projections, the MLP."""
    blocks = nn.ModuleList()
    for _ in range(layers):
        blocks.append(nn.ModuleDict({
            "ln1": nn.LayerNorm(d), "qkv": nn.Linear(d, 3 * d), "proj": nn.Linear(d, d),
            "ln2": nn.LayerNorm(d), "fc": nn.Linear(d, 4 * d), "out": nn.Linear(4 * d, d)}))
    return blocks


class GptLike(nn.Module):
    """A decoder-only transformer: causal self-attention written out, as GPT-2 does."""

    def __init__(self, vocab=1000, d=64, heads=4, layers=2, seq=16):
        super().__init__()
        self.heads = heads
        self.d = d
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.blocks = _decoder_blocks(d, layers)
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.register_buffer("mask", torch.tril(torch.ones(seq, seq)).view(1, 1, seq, seq))

    def forward(self, ids):
        b, t = ids.shape
        pos = torch.arange(0, t, dtype=torch.long).unsqueeze(0)
        x = self.tok(ids) + self.pos(pos)
        for blk in self.blocks:
            h = blk["ln1"](x)
            q, k, v = blk["qkv"](h).split(self.d, dim=2)
            hd = self.d // self.heads
            q = q.view(b, t, self.heads, hd).transpose(1, 2)
            k = k.view(b, t, self.heads, hd).transpose(1, 2)
            v = v.view(b, t, self.heads, hd).transpose(1, 2)
            att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            att = att.masked_fill(self.mask[:, :, :t, :t] == 0, float("-inf"))
            att = torch.softmax(att, dim=-1)
            y = (att @ v).transpose(1, 2).contiguous().view(b, t, self.d)
            x = x + blk["proj"](y)
            h = blk["ln2"](x)
            x = x + blk["out"](nn.functional.gelu(blk["fc"](h)))
        return self.head(self.ln(x))


class GptKvCache(nn.Module):
    """GptLike's decoder with a static KV cache, as transformers' static cache exports it:
    forward(tokens [1, T], pos [1], cache [layers, 2, heads, max_seq, head_dim]) -> (logits [T,
    vocab], the cache with the T new keys and values at positions pos .. pos + T - 1). Written
    with comparisons, one-hot matmuls and where (no scatter), so one graph with a symbolic T is a
    prefill (T = the prompt) and a decode step (T = 1)."""

    def __init__(self, vocab=50, d=32, heads=2, layers=2, max_seq=32):
        super().__init__()
        self.d, self.heads, self.max_seq = d, heads, max_seq
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(max_seq, d)
        self.blocks = _decoder_blocks(d, layers)
        self.ln = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def empty_cache(self):
        return torch.zeros(len(self.blocks), 2, self.heads, self.max_seq, self.d // self.heads)

    def forward(self, tokens, pos, cache):
        t, hd = tokens.shape[1], self.d // self.heads
        positions = pos + torch.arange(t)
        x = self.tok(tokens)[0] + self.pos(positions)
        slots = torch.arange(self.max_seq)
        place = (slots[:, None] == positions[None, :]).float()  # [max_seq, T]: where each new row goes
        keep = 1.0 - place.sum(dim=1)
        visible = slots[None, :] <= positions[:, None]          # [T, max_seq]: causal over the cache
        caches = []
        for i, blk in enumerate(self.blocks):
            q, k, v = blk["qkv"](blk["ln1"](x)).split(self.d, dim=-1)
            q, k, v = (y.reshape(t, self.heads, hd).transpose(0, 1) for y in (q, k, v))
            kc = cache[i, 0] * keep[None, :, None] + place[None] @ k
            vc = cache[i, 1] * keep[None, :, None] + place[None] @ v
            caches.append(torch.stack([kc, vc]))
            att = (q @ kc.transpose(1, 2) / math.sqrt(hd)).masked_fill(~visible[None], -1e9)
            y = (torch.softmax(att, dim=-1) @ vc).transpose(0, 1).reshape(t, self.d)
            x = x + blk["proj"](y)
            x = x + blk["out"](nn.functional.gelu(blk["fc"](blk["ln2"](x))))
        return self.head(self.ln(x)), torch.stack(caches)


def greedy_decode(step, prompt, cache, tokens):
    """`tokens` greedy tokens after `prompt` [1, T] with `step(tokens, pos, cache) -> (logits,
    cache)`: the prompt in one step (prefill), then one token a step (decode)."""
    logits, cache = step(prompt, [0], cache)
    out = [int(logits[-1].argmax())]
    while len(out) < tokens:
        logits, cache = step([[out[-1]]], [prompt.shape[1] + len(out) - 1], cache)
        out.append(int(logits[-1].argmax()))
    return out


class ShuffleUnit(nn.Module):
    """A ShuffleNet (v1) unit: grouped 1x1 convolution, channel shuffle, depthwise 3x3 (stride
    1 or 2), grouped 1x1; added to the input, or concatenated with its average pool at stride 2."""

    def __init__(self, cin, cout, groups, stride):
        super().__init__()
        mid = cout // 4
        self.groups, self.stride = groups, stride
        out = cout - cin if stride == 2 else cout
        self.reduce = nn.Sequential(nn.Conv2d(cin, mid, 1, groups=groups, bias=False), nn.BatchNorm2d(mid), nn.ReLU())
        self.depthwise = nn.Sequential(nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False), nn.BatchNorm2d(mid))
        self.expand = nn.Sequential(nn.Conv2d(mid, out, 1, groups=groups, bias=False), nn.BatchNorm2d(out))

    def forward(self, x):
        y = self.reduce(x)
        n, c, h, w = y.shape
        y = y.reshape(n, self.groups, c // self.groups, h, w).transpose(1, 2).reshape(n, c, h, w)
        y = self.expand(self.depthwise(y))
        if self.stride == 2:
            return torch.relu(torch.cat([nn.functional.avg_pool2d(x, 3, 2, 1), y], 1))
        return torch.relu(x + y)


class ShuffleNetV1(nn.Module):
    """ShuffleNet v1 (3 groups) at a reduced width and depth: grouped 1x1 convolutions of group
    widths 8 to 40 over 16x16 to 4x4 images, which torchvision's ShuffleNet v2 (depthwise only)
    does not have."""

    def __init__(self, groups=3, widths=(24, 120, 240, 480), repeats=(2, 3, 2)):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, widths[0], 3, 2, 1, bias=False), nn.BatchNorm2d(widths[0]), nn.ReLU(),
                                  nn.MaxPool2d(3, 2, 1))
        units, cin = [], widths[0]
        for cout, n in zip(widths[1:], repeats):
            # The first unit reads the stem's 24 channels: ShuffleNet leaves that 1x1 ungrouped.
            units.append(ShuffleUnit(cin, cout, groups if cin != widths[0] else 1, 2))
            units += [ShuffleUnit(cout, cout, groups, 1) for _ in range(n - 1)]
            cin = cout
        self.units = nn.Sequential(*units)
        self.head = nn.Linear(cin, 10)

    def forward(self, x):
        return self.head(self.units(self.stem(x)).mean(dim=(2, 3)))


# Full-size configurations for benchmarks/compare_ort.py (the tests use the defaults above).
class EdgeCnn(nn.Module):
    """A small CNN for the `edge` machine (1 MiB of SRAM): three 24-channel 3x3 convolutions at
    64x64 (384 KiB per activation) with a residual connection whose skip value waits, unread,
    while the second convolution reads the first's output and writes its own: three such
    activations do not fit in the SRAM, two do."""

    def __init__(self):
        super().__init__()
        self.stem = nn.Conv2d(3, 24, 3, padding=1)
        self.conv1 = nn.Conv2d(24, 24, 3, padding=1)
        self.conv2 = nn.Conv2d(24, 24, 3, padding=1)
        self.head = nn.Linear(24, 10)

    def forward(self, x):
        skip = torch.relu(self.stem(x))
        y = torch.relu(self.conv1(skip))
        z = torch.relu(self.conv2(y) + skip)
        return self.head(z.mean(dim=(2, 3)))


FULL_BERT = dict(vocab=8192, d=768, heads=12, layers=4, seq=128, ff=3072)  # BERT-base sized encoder
FULL_GPT = dict(vocab=8192, d=768, heads=12, layers=4, seq=128)  # feed-forward 4 x 768
FULL_IMAGE_SIZE = 224


def build(name, full=False):
    """(model, example input, ONNX opset) for a test model name. `full`: benchmark size
    (images 224x224, transformers of width 768 over 128 tokens) instead of the tests' small one."""
    torch.manual_seed(0)
    if name == "mlp":
        return Mlp(), torch.randn(1, 1, 28, 28), 13
    if name == "bert_like":
        cfg = FULL_BERT if full else {}
        model = BertLike(**cfg)
        if full:
            # nn.TransformerEncoder deep-copies one layer, and the exporter then stores the
            # equal weights once: give each layer its own, as a trained model has.
            for layer in model.encoder.layers:
                layer.self_attn._reset_parameters()
                layer.linear1.reset_parameters()
                layer.linear2.reset_parameters()
        return model, torch.randint(0, cfg.get("vocab", 1000), (1, cfg.get("seq", 16))), 14
    if name == "edge_cnn":
        return EdgeCnn(), torch.randn(1, 3, 64, 64), 13
    if name == "gpt_1024":
        # The test decoder at sequence length 1024 (memory budgets, docs/memory.md): its 4 x
        # 1024 x 1024 attention scores dominate the arena.
        return GptLike(seq=1024), torch.randint(0, 1000, (1, 1024)), 17
    if name == "gpt_like":
        cfg = FULL_GPT if full else {}
        return GptLike(**cfg), torch.randint(0, cfg.get("vocab", 1000), (1, cfg.get("seq", 16))), 17
    if name == "shufflenet_v1":
        return ShuffleNetV1(), torch.randn(1, 3, 64, 64), 13
    if name == "llama_like":
        return LlamaLike(), torch.randint(0, 1000, (1, 16)), 17
    if name == "unet":
        return UNet(), torch.randn(1, 3, 64, 64), 17
    sizes = {"regnet_y_400mf": 112, "resnext50_32x4d": 80, "resnet18": 64, "mobilenet_v2": 64, "mobilenet_v3_small": 64, "squeezenet1_1": 64,
             "shufflenet_v2_x1_0": 64, "efficientnet_b0": 64, "resnet50": 224, "densenet121": 224,
             "inception_v3": 299, "vgg11": 224}
    if name not in sizes:
        raise KeyError(name)
    kwargs = {}
    import torchvision
    ctor = getattr(torchvision.models, name)
    if name == "inception_v3":
        # Its own initialization (truncated normal, std 0.1) with inference-mode BatchNorm
        # statistics reaches 1e11 at the output, where float32 itself (PyTorch's included)
        # cannot agree to 1e-4; PyTorch's default initialization keeps it well conditioned.
        kwargs = {"aux_logits": False, "init_weights": False}
    model = ctor(**kwargs)
    opset = {"mobilenet_v3_small": 14, "efficientnet_b0": 15, "shufflenet_v2_x1_0": 16}.get(name, 13)
    size = max(sizes[name], FULL_IMAGE_SIZE) if full else sizes[name]
    return model, torch.randn(1, 3, size, size), opset


CI_MODELS = ["mlp", "resnet18", "mobilenet_v2", "mobilenet_v3_small", "squeezenet1_1", "shufflenet_v2_x1_0",
             "efficientnet_b0", "bert_like", "gpt_like"]
LARGE_MODELS = ["resnet50", "densenet121", "inception_v3", "vgg11"]


def low_entropy(model, levels=5):
    """Rounds every weight of `model` (in place) to one of `levels` values of its output
    channel, evenly spaced over [-max|w|, max|w|] of the channel: the model computes as a
    trained one does (every channel its own scale), and its weights compress ~10x, so a
    full-size executable and its TorchScript travel to a GPU machine small (the device check)."""
    half = (levels - 1) / 2
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() < 2:
                continue
            scale = p.abs().reshape(p.shape[0], -1).amax(dim=1).clamp_min(1e-12)
            shape = (-1,) + (1,) * (p.dim() - 1)
            p.copy_(torch.round(p / scale.reshape(shape) * half) / half * scale.reshape(shape))
    return model


def export(name, onnx_path, seed=0, full=False, weight_levels=None, dynamic_batch=False):
    """Writes `onnx_path`; returns (input name, input array, reference output array).
    `weight_levels`: round the weights to that many values per channel (low_entropy).
    `dynamic_batch`: the input's and output's leading dimension is the symbolic "batch"."""
    model, x, opset = build(name, full)
    model = _perturb(model, seed).eval()
    if weight_levels:
        low_entropy(model, weight_levels)
    with torch.no_grad():
        ref = model(x)
    # Two models keep PyTorch's shape arithmetic (Shape -> Gather -> Concat -> Reshape, chunk
    # sizes) for the importer to fold.
    fold = name not in ("bert_like", "shufflenet_v2_x1_0")
    axes = {"input": {0: "batch"}, "output": {0: "batch"}} if dynamic_batch else None
    torch.onnx.export(model, (x,), onnx_path, opset_version=opset, input_names=["input"],
                      output_names=["output"], do_constant_folding=fold, dynamic_axes=axes)
    return "input", x.numpy(), ref.numpy()
