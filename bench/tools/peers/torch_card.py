#!/usr/bin/env python3
"""The same work in plain PyTorch on the same card, for figures side by side
with gpumem's (the card checks run it beside gpumem; it uses nothing of
gpumem but a model's config.json). One JSON object a line on stdout.

  torch_card.py basics
      free memory (torch.cuda.mem_get_info), the largest torch.empty, a
      device-to-device copy's bandwidth, matmul at 8192^3 (fp16, bf16, fp8)
  torch_card.py forward CONFIG --batch B --seq S
      a bf16 prefill of B x S tokens, no grad: every layer (RMSNorm, rotary
      q/k, scaled_dot_product_attention with GQA, SwiGLU), K and V written to
      a cache, the LM head on the last position; tokens/s and MFU
  torch_card.py train CONFIG --method full|lora|qlora --batch B --seq S
                  [--rank R] [--recompute none|full]
      one training step repeated: forward, cross-entropy over fp32 logits,
      backward, AdamW; the peak memory the step held and its time
        full   bf16 weights and gradients, fp32 master weights and AdamW
               moments (16 bytes a parameter, gpumem plan's train recipe)
        lora   bf16 base frozen; rank-R adapters in fp32 on q,k,v,o,gate,
               up,down (alpha 2R), computed in bf16; AdamW on the adapters
        qlora  as lora over a 4-bit NF4 base (blocks of 64, absmax in 8 bits
               with an fp32 scale a 256 blocks: QLoRA's double quantisation,
               bitsandbytes' layout), dequantised to bf16 a projection at a
               time in forward and again in backward (as bitsandbytes'
               MatMul4Bit does); LM head and embedding in bf16
      --recompute full: each decoder layer under torch.utils.checkpoint

CONFIG is a Hugging Face config.json (share/models/*.json). Weights and
tokens are random: the shapes set the memory and the time. Timings: CUDA
synchronised wall time, warm-up first; MFU against --peak-tflops (default
989.4, the dense bf16 peak of an H100/H200 SXM by NVIDIA's datasheet).
Model FLOPs (PaLM's convention): a forward 2*P*T + 4*L*S*H*T (P the
parameters outside the embedding, T tokens, L layers, S the sequence, H the
hidden width: QK^T and PV in full, as if not causal); a training step 3x.
"""
import argparse
import json
import math
import sys
import time

import torch
import torch.nn.functional as F

NF4 = [-1.0, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
       -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0.0,
       0.07958029955625534, 0.16093020141124725, 0.24611230194568634,
       0.33791524171829224, 0.44070982933044434, 0.5626170039176941,
       0.7229568362236023, 1.0]
LORA_TARGETS = ("q", "k", "v", "o", "gate", "up", "down")


def emit(**kv):
    print(json.dumps(kv), flush=True)


def sync():
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def cuda_stat(fn, default=None):
    """A torch.cuda memory figure, or default on a CPU (a dry run of the script)."""
    return fn() if torch.cuda.is_available() else default


class Config:
    def __init__(self, path):
        with open(path) as f:
            c = json.load(f)
        if c.get("model_type") not in ("llama", "mistral", "qwen2"):
            sys.exit(f"torch_card: {path}: only Llama-style models (got {c.get('model_type')})")
        self.h = c["hidden_size"]
        self.ffn = c["intermediate_size"]
        self.layers = c["num_hidden_layers"]
        self.heads = c["num_attention_heads"]
        self.kv_heads = c.get("num_key_value_heads", self.heads)
        self.head_dim = c.get("head_dim") or self.h // self.heads
        self.vocab = c["vocab_size"]
        self.eps = c.get("rms_norm_eps", 1e-5)
        self.theta = c.get("rope_theta", 10000.0)
        self.tied = c.get("tie_word_embeddings", False)

    def shapes(self):
        """(name, out, in) of one layer's projections."""
        q, kv = self.heads * self.head_dim, self.kv_heads * self.head_dim
        return [("q", q, self.h), ("k", kv, self.h), ("v", kv, self.h), ("o", self.h, q),
                ("gate", self.ffn, self.h), ("up", self.ffn, self.h), ("down", self.h, self.ffn)]

    def params(self):
        per_layer = sum(o * i for _, o, i in self.shapes()) + 2 * self.h
        emb = self.vocab * self.h
        return self.layers * per_layer + self.h + emb + (0 if self.tied else emb)

    def flops_forward(self, batch, seq):
        """PaLM's model FLOPs of a forward over batch x seq tokens."""
        tokens = batch * seq
        non_embedding = self.params() - self.vocab * self.h
        return 2 * non_embedding * tokens + 4 * self.layers * seq * self.heads * self.head_dim * tokens


# ---- NF4 storage (QLoRA) -------------------------------------------------

class NF4Weight:
    """A [out, in] weight in 4 bits: codes (two a byte), an 8-bit absmax a
    block of 64, an fp32 scale a 256 blocks. Random codes: the bytes and the
    work of dequantising are a real NF4 weight's."""

    def __init__(self, out, inp, dev):
        n = out * inp
        assert n % (64 * 256) == 0, "NF4 blocks must tile the weight"
        self.shape = (out, inp)
        self.codes = torch.randint(0, 256, (n // 2,), dtype=torch.uint8, device=dev)
        self.absmax_q = torch.randint(1, 256, (n // 64,), dtype=torch.uint8, device=dev)
        self.scale = torch.rand(n // (64 * 256), dtype=torch.float32, device=dev) * 0.05 / 255

    def nbytes(self):
        return sum(t.numel() * t.element_size() for t in (self.codes, self.absmax_q, self.scale))

    def dequantise(self, pair_lut):
        absmax = (self.absmax_q.view(-1, 256).float() * self.scale[:, None]).view(-1, 1)
        pairs = pair_lut.index_select(0, self.codes.int())  # [n/2, 2]
        return (pairs.view(-1, 64).float() * absmax).to(torch.bfloat16).view(self.shape)


class NF4Linear(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, dummy, weight, lut):
        ctx.weight, ctx.lut = weight, lut
        return F.linear(x, weight.dequantise(lut))

    @staticmethod
    def backward(ctx, gy):
        return gy @ ctx.weight.dequantise(ctx.lut), None, None, None


# ---- the model -------------------------------------------------------------

class Proj(torch.nn.Module):
    def __init__(self, out, inp, method, rank, lut, dev):
        super().__init__()
        self.lut = lut
        if method == "qlora":
            self.nf4 = NF4Weight(out, inp, dev)
            self.register_buffer("anchor", torch.zeros((), device=dev))
            self.weight = None
        else:
            w = torch.randn(out, inp, dtype=torch.bfloat16, device=dev) * 0.02
            self.weight = torch.nn.Parameter(w, requires_grad=(method == "full"))
        self.lora = method in ("lora", "qlora") and rank > 0
        if self.lora:
            self.A = torch.nn.Parameter(torch.randn(rank, inp, device=dev) / math.sqrt(inp))
            self.B = torch.nn.Parameter(torch.zeros(out, rank, device=dev))
            self.scaling = 2.0  # alpha = 2 * rank

    def forward(self, x):
        if self.weight is None:
            y = NF4Linear.apply(x, self.anchor, self.nf4, self.lut)
        else:
            y = F.linear(x, self.weight)
        if self.lora:
            y = y + F.linear(F.linear(x, self.A.to(x.dtype)), self.B.to(x.dtype)) * self.scaling
        return y


def rms_norm(x, w, eps):
    xf = x.float()
    return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * w


def rotary(x, cos, sin):
    half = x.shape[-1] // 2
    rotated = torch.cat((-x[..., half:], x[..., :half]), dim=-1)
    return x * cos + rotated * sin


def attention(q, k, v):
    try:
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    except TypeError:  # PyTorch before 2.5
        rep = q.shape[1] // k.shape[1]
        return F.scaled_dot_product_attention(q, k.repeat_interleave(rep, 1),
                                              v.repeat_interleave(rep, 1), is_causal=True)


class Layer(torch.nn.Module):
    def __init__(self, cfg, method, rank, lut, dev):
        super().__init__()
        self.cfg = cfg
        self.proj = torch.nn.ModuleDict(
            {n: Proj(o, i, method, rank, lut, dev) for n, o, i in cfg.shapes()})
        trainable = method == "full"
        self.norm1 = torch.nn.Parameter(torch.ones(cfg.h, dtype=torch.bfloat16, device=dev),
                                        requires_grad=trainable)
        self.norm2 = torch.nn.Parameter(torch.ones(cfg.h, dtype=torch.bfloat16, device=dev),
                                        requires_grad=trainable)

    def forward(self, x, cos, sin, cache=None):
        c, p = self.cfg, self.proj
        b, s, _ = x.shape
        n = rms_norm(x, self.norm1, c.eps)
        q = p["q"](n).view(b, s, c.heads, c.head_dim).transpose(1, 2)
        k = p["k"](n).view(b, s, c.kv_heads, c.head_dim).transpose(1, 2)
        v = p["v"](n).view(b, s, c.kv_heads, c.head_dim).transpose(1, 2)
        q, k = rotary(q, cos, sin), rotary(k, cos, sin)
        if cache is not None:
            cache[0].copy_(k)
            cache[1].copy_(v)
        a = attention(q, k, v).transpose(1, 2).reshape(b, s, c.heads * c.head_dim)
        x = x + p["o"](a)
        n = rms_norm(x, self.norm2, c.eps)
        return x + p["down"](F.silu(p["gate"](n)) * p["up"](n))


class Model(torch.nn.Module):
    def __init__(self, cfg, method="full", rank=0, dev=None):
        super().__init__()
        self.cfg = cfg
        lut = None
        if method == "qlora":
            t = torch.tensor(NF4, dtype=torch.float32)
            lut = torch.stack([t.repeat(16), t.repeat_interleave(16)], 1)  # byte -> (low, high)
            lut = lut.to(torch.bfloat16).to(dev)
        trainable = method == "full"
        self.embed = torch.nn.Parameter(
            torch.randn(cfg.vocab, cfg.h, dtype=torch.bfloat16, device=dev) * 0.02,
            requires_grad=trainable)
        self.layers = torch.nn.ModuleList([Layer(cfg, method, rank, lut, dev)
                                           for _ in range(cfg.layers)])
        self.norm = torch.nn.Parameter(torch.ones(cfg.h, dtype=torch.bfloat16, device=dev),
                                       requires_grad=trainable)
        self.head = None if cfg.tied else torch.nn.Parameter(
            torch.randn(cfg.vocab, cfg.h, dtype=torch.bfloat16, device=dev) * 0.02,
            requires_grad=trainable)

    def rope(self, seq, dev):
        c = self.cfg
        inv = 1.0 / (c.theta ** (torch.arange(0, c.head_dim, 2, device=dev).float() / c.head_dim))
        f = torch.outer(torch.arange(seq, device=dev).float(), inv)
        f = torch.cat((f, f), -1)
        return f.cos().to(torch.bfloat16), f.sin().to(torch.bfloat16)

    def hidden(self, tokens, recompute=False, caches=None):
        cos, sin = self.rope(tokens.shape[1], tokens.device)
        x = F.embedding(tokens, self.embed)
        for i, layer in enumerate(self.layers):
            cache = caches[i] if caches is not None else None
            if recompute:
                x = torch.utils.checkpoint.checkpoint(layer, x, cos, sin, use_reentrant=False)
            else:
                x = layer(x, cos, sin, cache)
        return rms_norm(x, self.norm, self.cfg.eps)

    def head_weight(self):
        return self.embed if self.head is None else self.head


# ---- commands ----------------------------------------------------------------

def timed(fn, warm, reps):
    for _ in range(warm):
        fn()
    sync()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return times


def cmd_basics(args):
    dev = device()
    free, total = torch.cuda.mem_get_info()
    emit(what="mem_get_info", free_bytes=free, total_bytes=total)
    lo, hi = 0, free // 2**20  # MiB; lo fits, hi + 1 does not (searched)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        try:
            t = torch.empty(mid * 2**20, dtype=torch.uint8, device=dev)
            del t
            lo = mid
        except torch.OutOfMemoryError:
            hi = mid - 1
        torch.cuda.empty_cache()
    emit(what="largest_torch_empty", mib=lo)
    n = 2**30
    a = torch.empty(n, dtype=torch.uint8, device=dev).fill_(1)
    b = torch.empty_like(a)
    ts = timed(lambda: b.copy_(a), 3, 20)
    emit(what="device_copy", bytes=n, gbs_best=2 * n / min(ts) / 1e9,
         gbs_median=2 * n / sorted(ts)[len(ts) // 2] / 1e9)
    del a, b
    m = args.gemm
    for name, dt in (("fp16", torch.float16), ("bf16", torch.bfloat16)):
        x = torch.randn(m, m, device=dev, dtype=dt)
        y = torch.randn(m, m, device=dev, dtype=dt)
        ts = timed(lambda: x @ y, 3, 10)
        emit(what="matmul", precision=name, m=m, tflops_mean=2 * m**3 / (sum(ts) / len(ts)) / 1e12,
             tflops_best=2 * m**3 / min(ts) / 1e12)
        del x, y
    try:
        x = torch.randn(m, m, device=dev).to(torch.float8_e4m3fn)
        y = torch.randn(m, m, device=dev).to(torch.float8_e4m3fn).t()
        one = torch.ones((), device=dev)
        ts = timed(lambda: torch._scaled_mm(x, y, scale_a=one, scale_b=one,
                                            out_dtype=torch.bfloat16), 3, 10)
        emit(what="matmul", precision="fp8e4m3", m=m,
             tflops_mean=2 * m**3 / (sum(ts) / len(ts)) / 1e12, tflops_best=2 * m**3 / min(ts) / 1e12)
    except Exception as e:  # noqa: BLE001 (a figure we report missing, with why)
        emit(what="matmul", precision="fp8e4m3", error=str(e)[:200])


def cmd_forward(args):
    dev = device()
    cfg = Config(args.config)
    with torch.inference_mode():
        model = Model(cfg, "full", 0, dev)
        b, s = args.batch, args.seq
        caches = [(torch.empty(b, cfg.kv_heads, s, cfg.head_dim, dtype=torch.bfloat16, device=dev),
                   torch.empty(b, cfg.kv_heads, s, cfg.head_dim, dtype=torch.bfloat16, device=dev))
                  for _ in range(cfg.layers)]
        tokens = torch.randint(0, cfg.vocab, (b, s), device=dev)
        cuda_stat(torch.cuda.reset_peak_memory_stats)

        def step():
            h = model.hidden(tokens, caches=caches)
            return F.linear(h[:, -1], model.head_weight()).float()

        logits = step()
        if not torch.isfinite(logits).all():
            sys.exit("torch_card: the forward's logits are not finite")
        ts = timed(step, 1, args.reps)
    best, med = min(ts), sorted(ts)[len(ts) // 2]
    flops = cfg.flops_forward(b, s)
    emit(what="forward", params=cfg.params(), batch=b, seq=s, seconds_best=best, seconds_median=med,
         tokens_per_s=b * s / med, tflops=flops / med / 1e12,
         mfu=flops / med / (args.peak_tflops * 1e12),
         max_allocated=cuda_stat(torch.cuda.max_memory_allocated), torch=torch.__version__)


class MasterAdamW:
    """AdamW over fp32 master copies of bf16 parameters (the recipe of mixed
    precision training that gpumem plan counts: 2 + 2 + 4 + 4 + 4 bytes a
    parameter); one parameter's fp32 gradient is converted at a time."""

    def __init__(self, params, lr=1e-5, betas=(0.9, 0.95), eps=1e-8, wd=0.0):
        self.params = list(params)
        self.master = [p.detach().float() for p in self.params]
        self.m = [torch.zeros_like(w) for w in self.master]
        self.v = [torch.zeros_like(w) for w in self.master]
        self.lr, self.betas, self.eps, self.wd, self.t = lr, betas, eps, wd, 0

    def step(self):
        self.t += 1
        b1, b2 = self.betas
        c1, c2 = 1 - b1**self.t, 1 - b2**self.t
        for p, w, m, v in zip(self.params, self.master, self.m, self.v):
            g = p.grad.float()
            m.mul_(b1).add_(g, alpha=1 - b1)
            v.mul_(b2).addcmul_(g, g, value=1 - b2)
            del g
            w.mul_(1 - self.lr * self.wd)
            w.addcdiv_(m, v.div(c2).sqrt_().add_(self.eps), value=-self.lr / c1)
            p.data.copy_(w)
            p.grad = None


def cmd_train(args):
    dev = device()
    cfg = Config(args.config)
    free0, total = cuda_stat(torch.cuda.mem_get_info, (0, 0))
    model = Model(cfg, args.method, args.rank, dev)
    trainable = [p for p in model.parameters() if p.requires_grad]
    if args.method == "full":
        opt = MasterAdamW(trainable)
    else:
        opt = torch.optim.AdamW(trainable, lr=1e-4)
    b, s = args.batch, args.seq
    tokens = torch.randint(0, cfg.vocab, (b, s + 1), device=dev)
    losses = []

    def step():
        h = model.hidden(tokens[:, :-1], recompute=args.recompute == "full")
        logits = F.linear(h, model.head_weight()).float()
        loss = F.cross_entropy(logits.view(-1, cfg.vocab), tokens[:, 1:].reshape(-1))
        del logits, h
        loss.backward()
        opt.step()
        if args.method != "full":
            opt.zero_grad(set_to_none=True)
        losses.append(loss.item())

    cuda_stat(torch.cuda.reset_peak_memory_stats)
    ts = timed(step, 1, args.reps)
    if not all(math.isfinite(x) for x in losses):
        sys.exit(f"torch_card: a loss is not finite: {losses}")
    free1, _ = cuda_stat(torch.cuda.mem_get_info, (0, 0))
    reserved = cuda_stat(torch.cuda.memory_reserved, 0)
    # The driver's view of the peak: the allocator's peak reservation plus
    # what the process holds beside it (context, cuBLAS workspaces).
    beside = (free0 - free1) - reserved
    med = sorted(ts)[len(ts) // 2]
    flops = 3 * cfg.flops_forward(b, s)
    nbase = sum(l.proj[n].nf4.nbytes() for l in model.layers for n in l.proj) \
        if args.method == "qlora" else None
    emit(what="train", method=args.method, recompute=args.recompute, batch=b, seq=s,
         rank=args.rank if args.method != "full" else 0,
         trainable_params=sum(p.numel() for p in trainable), params=cfg.params(),
         nf4_base_bytes=nbase, seconds_median=med, seconds_best=min(ts),
         tokens_per_s=b * s / med, mfu=flops / med / (args.peak_tflops * 1e12),
         max_allocated=cuda_stat(torch.cuda.max_memory_allocated),
         max_reserved=cuda_stat(torch.cuda.max_memory_reserved),
         peak_device_used=cuda_stat(torch.cuda.max_memory_reserved, 0) + max(beside, 0),
         beside_allocator=beside, total_bytes=total, loss_last=losses[-1],
         torch=torch.__version__)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("basics")
    p.add_argument("--gemm", type=int, default=8192)
    for name in ("forward", "train"):
        p = sub.add_parser(name)
        p.add_argument("config")
        p.add_argument("--batch", type=int, default=1)
        p.add_argument("--seq", type=int, default=2048)
        p.add_argument("--reps", type=int, default=5 if name == "forward" else 3)
        p.add_argument("--peak-tflops", type=float, default=989.4)
        if name == "train":
            p.add_argument("--method", choices=("full", "lora", "qlora"), default="full")
            p.add_argument("--rank", type=int, default=16)
            p.add_argument("--recompute", choices=("none", "full"), default="none")
    args = ap.parse_args()
    {"basics": cmd_basics, "forward": cmd_forward, "train": cmd_train}[args.cmd](args)


if __name__ == "__main__":
    main()
