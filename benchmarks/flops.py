"""FLOPs of the `vs_comlrl.py` job, counted from the model's config and the run's token counts, and the machine's peak.

Standard dense-transformer counting, 2 FLOPs per multiply-add, matrix products only: norms, activations, softmax,
rotary embeddings, the embedding lookup, the sampler and the optimizer are not counted. For a Llama-style model with
L layers, hidden size d, H query heads and H_kv key/value heads of size d_h, MLP size d_ff and vocabulary V:

- a token through the layers' linear maps: 2·L·(d·H·d_h + 2·d·H_kv·d_h + H·d_h·d + 3·d·d_ff);
- attention, for a token attending to c keys: 4·L·H·d_h·c (QKᵀ and AV);
- the LM head, only at positions whose logits are computed: 2·d·V;
- LoRA of rank r on every linear map of every layer: 2·r·(in + out) per adapted map per token.

Backward: full fine-tuning costs 2 × the forward of every product (input and weight gradients). With LoRA the frozen
base needs input gradients only (1 × its forward, the LM head's included; attention's backward is still 2 × its
forward), and the LoRA matrices 2 × their forward; the first layer's q, k, v maps (and their LoRA A's) need no input
gradient either, as nothing below them is trained (autograd skips it; about 0.4% of the job's LoRA backward).

The job's work per agent, from the prompt lengths P_b and the completion lengths n_bk (tokens up to and including the
first EOS) that the run actually produced, is what the job needs, whatever an implementation computes beyond it:

- generation: a prefill of each prompt's first P_b − 1 tokens (causal, one logits row), then for each of its K samples
  n_bk decoding steps (the prompt's last token, then each sampled token but the last), step t attending to P_b + t keys,
  with logits at every step;
- update: the same tokens (each prompt's prefix once, each sample's n_bk positions, logits at those n_bk), forward and
  backward.

`matmul_floor` times the job's own products at their shapes, the floor `vs_comlrl.py` prints (see benchmarks/README.md).

    OMP_NUM_THREADS=1 python benchmarks/flops.py --check    # the formula against torch's FlopCounterMode on a tiny Llama
    OMP_NUM_THREADS=1 python benchmarks/flops.py --peak     # the single-thread fp32 matmul peak of this machine

Importable from both venvs (torch and transformers only; no comlrl).
"""
import argparse, sys, time
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import torch


@dataclass(frozen=True)
class Shapes:
    "The sizes of a Llama-style decoder that its FLOPs depend on."
    layers: int  # L
    hidden: int  # d
    heads: int  # H (query heads)
    kv_heads: int  # H_kv
    head_dim: int  # d_h
    intermediate: int  # d_ff
    vocab: int  # V

    @classmethod
    def from_config(cls, cfg) -> 'Shapes':
        "Shapes from a transformers config (LlamaConfig and lookalikes)."
        heads = cfg.num_attention_heads
        return cls(layers=cfg.num_hidden_layers, hidden=cfg.hidden_size, heads=heads,
                   kv_heads=getattr(cfg, 'num_key_value_heads', None) or heads,
                   head_dim=getattr(cfg, 'head_dim', None) or cfg.hidden_size // heads,
                   intermediate=cfg.intermediate_size, vocab=cfg.vocab_size)

    def linears(self) -> list:
        "(in, out) features of one layer's linear maps: q, k, v, o, gate, up, down."
        d, q, kv, f = self.hidden, self.heads * self.head_dim, self.kv_heads * self.head_dim, self.intermediate
        return [(d, q), (d, kv), (d, kv), (q, d), (d, f), (d, f), (f, d)]


@dataclass(frozen=True)
class Work:
    "A set of token positions run through the model: FLOPs are linear in these three counts."
    tokens: int = 0  # positions through the layers
    keys: int = 0  # keys attended to, summed over those positions
    logits: int = 0  # positions whose logits (LM head) are computed

    def __add__(self, o: 'Work') -> 'Work': return Work(self.tokens + o.tokens, self.keys + o.keys, self.logits + o.logits)


def prefix_work(prompt_len: int, logits: int = 0) -> Work:
    "A prompt's first P − 1 tokens, causal (token i attends to i + 1 keys), with `logits` rows."
    m = max(prompt_len - 1, 0)
    return Work(m, m * (m + 1) // 2, logits)


def sample_work(prompt_len: int, n: int) -> Work:
    "One sample of n tokens after a prompt of P: n positions, position t attending to P + t keys, logits at each."
    return Work(n, n * prompt_len + n * (n - 1) // 2, n)


def job_work(prompt_lens: Sequence[int], completion_lens: Sequence[Sequence[int]], prefill_logits: int) -> Work:
    "Each prompt's prefix once (with `prefill_logits` rows) plus each of its samples; completion_lens[b] = its K lengths."
    w = Work()
    for p, ns in zip(prompt_lens, completion_lens):
        w = w + prefix_work(p, prefill_logits)
        for n in ns: w = w + sample_work(p, n)
    return w


def linear_flops(s: Shapes) -> int:
    "FLOPs per token of all layers' linear maps (forward)."
    return 2 * s.layers * sum(i * o for i, o in s.linears())


def lora_flops(s: Shapes, rank: int) -> int:
    "FLOPs per token of rank-`rank` LoRA on every linear map of every layer (forward; 0 when rank is 0)."
    return 2 * rank * s.layers * sum(i + o for i, o in s.linears())


def attention_flops(s: Shapes, keys: int) -> int:
    "FLOPs of QKᵀ and AV in all layers for `keys` query-key pairs (forward)."
    return 4 * s.layers * s.heads * s.head_dim * keys


def head_flops(s: Shapes, rows: int) -> int:
    "FLOPs of the LM head for `rows` positions (forward)."
    return 2 * s.hidden * s.vocab * rows


def forward_flops(s: Shapes, w: Work, lora_rank: int = 0) -> int:
    "Forward FLOPs of `w`."
    return w.tokens * (linear_flops(s) + lora_flops(s, lora_rank)) + attention_flops(s, w.keys) + head_flops(s, w.logits)


def backward_flops(s: Shapes, w: Work, lora_rank: int = 0) -> int:
    "Backward FLOPs of `w`: full fine-tuning when lora_rank is 0, else a frozen base with LoRA of that rank."
    if not lora_rank: return 2 * forward_flops(s, w)
    qkv_in = sum(i for i, o in s.linears()[:3])  # first layer: no input gradient into q, k, v or their LoRA A's
    first_layer = 2 * sum(i * o for i, o in s.linears()[:3]) + 2 * lora_rank * qkv_in
    return (w.tokens * (linear_flops(s) + 2 * lora_flops(s, lora_rank) - first_layer)
            + 2 * attention_flops(s, w.keys) + head_flops(s, w.logits))


def agent_flops(s: Shapes, prompt_lens: Sequence[int], completion_lens: Sequence[Sequence[int]], lora_rank: int = 0) -> dict:
    """FLOPs of one agent's share of the job: {'generation', 'update', 'total'}.

    prompt_lens[b] = P_b tokens; completion_lens[b] = the K lengths n_bk of prompt b's samples (tokens up to and
    including the first EOS)."""
    gen = forward_flops(s, job_work(prompt_lens, completion_lens, prefill_logits=1), lora_rank)
    upd = job_work(prompt_lens, completion_lens, prefill_logits=0)
    upd = forward_flops(s, upd, lora_rank) + backward_flops(s, upd, lora_rank)
    return {'generation': gen, 'update': upd, 'total': gen + upd}


def job_flops(s: Shapes, per_agent: Sequence, lora_rank: int = 0) -> dict:
    "The job's FLOPs summed over agents: per_agent = [(prompt_lens, completion_lens), ...], one pair per agent (or per call)."
    out = {'generation': 0, 'update': 0, 'total': 0}
    for prompt_lens, completion_lens in per_agent:
        for k, v in agent_flops(s, prompt_lens, completion_lens, lora_rank).items(): out[k] += v
    return out


def matmul_peak(seconds: float = 5.0, n: int = 2048) -> float:
    "Single-thread fp32 peak in FLOP/s: the best rate of one n×n `torch.mm` over repetitions filling about `seconds`."
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        a, b = torch.randn(n, n), torch.randn(n, n)
        c = torch.empty(n, n)
        torch.mm(a, b, out=c)  # warm-up
        best, t_end = 0.0, time.perf_counter() + seconds
        while time.perf_counter() < t_end or best == 0.0:
            t = time.perf_counter()
            torch.mm(a, b, out=c)
            best = max(best, 2 * n ** 3 / (time.perf_counter() - t))
        return best
    finally:
        torch.set_num_threads(threads)


# ---- the matmul floor: the job's products at the rates this machine's BLAS reaches on their shapes -----------------

def linear_products(s: Shapes, rows: int, lora_rank: int = 0, backward: bool = False, full: bool = True,
                    first_layer_input_grads: bool = True) -> Counter:
    """The matrix products of `rows` positions through one layer of linear maps, as Counter{(kind, M, K, N): count}.

    kind 'fwd' is F.linear (x [M, K] by a weight [N, K]), 'dgrad' an input gradient (g [M, K] @ W [K, N]), 'wgrad' a
    weight gradient (g [M, K]ᵀ @ x [M, N], the K×N result), as autograd runs them. Backward: input gradients always (but
    the first layer's q, k, v when `first_layer_input_grads` is False), weight gradients of the base when `full`, and
    with LoRA (A [r, in], B [out, r]) the adapter's input and weight gradients."""
    c = Counter()
    for j, (i, o) in enumerate(s.linears()):
        if not backward:
            c['fwd', rows, i, o] += 1
            if lora_rank: c['fwd', rows, i, lora_rank] += 1; c['fwd', rows, lora_rank, o] += 1
            continue
        needs_input = first_layer_input_grads or j >= 3
        if needs_input: c['dgrad', rows, o, i] += 1
        if full: c['wgrad', rows, o, i] += 1
        if lora_rank:
            c['dgrad', rows, o, lora_rank] += 1  # into A's output
            c['wgrad', rows, o, lora_rank] += 1  # B's gradient
            if needs_input: c['dgrad', rows, lora_rank, i] += 1  # through A into x
            c['wgrad', rows, lora_rank, i] += 1  # A's gradient
    return c


def agent_products(s: Shapes, prompt_lens: Sequence[int], completion_lens: Sequence[Sequence[int]],
                   lora_rank: int = 0, batch_size: int = None) -> tuple[Counter, Counter, int]:
    """One agent's matrix products, (generation, update, attention FLOPs), as `agent_flops` counts the job: each prompt
    prefilled alone (P_b − 1 rows); the decoding steps of `batch_size` prompts' samples at a time (None: all), step t
    with the rows of the samples still running (n_bk > t); the update one prompt's K samples at a time, forward and
    backward."""
    gen, upd, L = Counter(), Counter(), s.layers
    add = lambda c, d, k=1: c.update({key: n * k for key, n in d.items()})
    for p in prompt_lens:
        add(gen, linear_products(s, p - 1, lora_rank), L)
        gen['fwd', 1, s.hidden, s.vocab] += 1
    B = batch_size or len(completion_lens)
    for b in range(0, len(completion_lens), B):
        lens = [n for ns in completion_lens[b:b + B] for n in ns]
        for t in range(max(lens, default=0)):
            m = sum(n > t for n in lens)
            add(gen, linear_products(s, m, lora_rank), L)
            gen['fwd', m, s.hidden, s.vocab] += 1
    for p, ns in zip(prompt_lens, completion_lens):
        m, r = p - 1 + sum(ns), sum(ns)
        add(upd, linear_products(s, m, lora_rank), L)
        add(upd, linear_products(s, m, lora_rank, backward=True, full=not lora_rank), L - 1)
        add(upd, linear_products(s, m, lora_rank, backward=True, full=not lora_rank, first_layer_input_grads=not lora_rank))
        upd['fwd', r, s.hidden, s.vocab] += 1
        upd['dgrad', r, s.vocab, s.hidden] += 1
        if not lora_rank: upd['wgrad', r, s.vocab, s.hidden] += 1
    keys = lambda logits: job_work(prompt_lens, completion_lens, logits).keys
    return gen, upd, attention_flops(s, keys(1)) + 3 * attention_flops(s, keys(0))  # the update: forward + 2 × backward


def products_flops(c: Counter) -> int:
    "FLOPs of a Counter of products from `linear_products` / `agent_products`."
    return sum(2 * M * K * N * n for (_, M, K, N), n in c.items())


def product_seconds(kind: str, M: int, K: int, N: int, reps: int = 3) -> float:
    "Best-of-`reps` seconds of one product (see `linear_products` for the kinds), after a warm-up, on one thread."
    if kind == 'fwd': x, w = torch.randn(M, K), torch.randn(N, K); f = lambda: torch.nn.functional.linear(x, w)
    elif kind == 'dgrad': g, w = torch.randn(M, K), torch.randn(K, N); f = lambda: g @ w
    else: g, x = torch.randn(M, K), torch.randn(M, N); f = lambda: g.t() @ x
    f()
    best = float('inf')
    for _ in range(reps):
        t = time.perf_counter(); f(); best = min(best, time.perf_counter() - t)
    return best


def matmul_floor(s: Shapes, per_agent: Sequence, lora_rank: int = 0, batch_size: int = None, peak: float = None,
                 reps: int = 3, cache: dict = None) -> dict:
    """Seconds the job would take if its matrix products ran at the rates this machine reaches on each of their shapes
    (each timed alone, best of `reps`, weights warm in cache), attention at `peak` FLOP/s and nothing else cost any
    time: norms, activations, softmax, sampling, the loss, the optimizer and Python all free. A lower bound for any
    implementation that runs these products at these shapes on one thread (another batching, e.g. the two LoRA agents'
    decoding rows through their shared base at once, changes the shapes and so the floor). `batch_size`: prompts
    decoded together (see `agent_products`); `cache` (a dict) keeps the products' timings across calls. Returns
    {'generation', 'update', 'attention', 'total'} in seconds; per_agent as in `job_flops`."""
    peak = peak or matmul_peak()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        cache, out = {} if cache is None else cache, {'generation': 0.0, 'update': 0.0, 'attention': 0.0}
        for prompt_lens, completion_lens in per_agent:
            gen, upd, att = agent_products(s, prompt_lens, completion_lens, lora_rank, batch_size)
            for name, c in (('generation', gen), ('update', upd)):
                for key, n in c.items():
                    if key not in cache: cache[key] = product_seconds(*key, reps=reps)
                    out[name] += n * cache[key]
            out['attention'] += att / peak
        out['total'] = sum(out.values())
        return out
    finally:
        torch.set_num_threads(threads)


# ---- self-check against torch's FLOP counter ------------------------------------------------------------------------

def _counted(model, ids, backward: bool = False, prefix: int = 0, **kwargs) -> dict:
    """FlopCounterMode's totals by op, {'mm': linear maps and LM head, 'bmm': attention}, for a forward over `ids` (and
    the backward of the summed logits); with `prefix` > 0, the first `prefix` tokens are cached uncounted and the rest
    decoded one token at a time against the cache."""
    from torch.utils.flop_counter import FlopCounterMode
    cache = model(ids[:, :prefix], use_cache=True).past_key_values if prefix else None
    with FlopCounterMode(display=False) as fc:
        if prefix:
            for t in range(prefix, ids.shape[1]): cache = model(ids[:, t:t + 1], past_key_values=cache, use_cache=True).past_key_values
        else:
            out = model(ids, **kwargs)
            if backward: out.logits.sum().backward()
    counts = {str(op).split('.')[-1]: v for op, v in fc.get_flop_counts()['Global'].items()}
    return {'mm': counts.get('mm', 0) + counts.get('addmm', 0), 'bmm': counts.get('bmm', 0)}


def check(tol: float = 0.01) -> bool:
    """Compare the formula with FlopCounterMode on a tiny random Llama; True when every pair agrees within `tol`.

    The model uses eager attention: FlopCounterMode does not count CPU SDPA at all, while eager attention's QKᵀ and AV
    are two counted bmm's over the full S × S score matrix (the causal mask is applied after). The attention term is
    therefore compared with the formula at S keys for each of the S queries in the whole-sequence passes; the decoding
    steps against a KV cache (one query, P + t keys each) check the key counts of the job's samples. The linear maps
    with the LM head (mm) and attention (bmm) are compared separately, and each exactly."""
    import peft
    from transformers import LlamaConfig, LlamaForCausalLM
    torch.manual_seed(0)
    cfg = LlamaConfig(num_hidden_layers=2, hidden_size=64, num_attention_heads=4, num_key_value_heads=2,
                      intermediate_size=128, vocab_size=256, max_position_embeddings=256, attn_implementation='eager')
    model, s, S, keep, r = LlamaForCausalLM(cfg), Shapes.from_config(cfg), 24, 5, 4
    ids = torch.randint(0, cfg.vocab_size, (1, S))

    def expected(w: Work, backward: bool, rank: int = 0) -> dict:
        "The formula, split like the counter: attention (bmm) and everything else (mm)."
        att = Work(0, w.keys, 0)
        lin = Work(w.tokens, 0, w.logits)
        f = lambda x: forward_flops(s, x, rank) + (backward_flops(s, x, rank) if backward else 0)
        return {'mm': f(lin), 'bmm': f(att)}

    full, last = Work(S, S * S, S), Work(S, S * S, keep)  # eager attention: S keys for every query
    cases = [('forward', _counted(model, ids, False), expected(full, False)),
             (f'forward, logits at the last {keep}', _counted(model, ids, False, logits_to_keep=keep), expected(last, False)),
             ('forward + backward, all trainable', _counted(model, ids, True), expected(full, True))]
    with torch.no_grad():  # decoding: a prompt of P = S - n + 1 tokens cached but its last, then n steps (the sample)
        n = 8
        cases.append((f'decoding {n} steps after {S - n} cached', _counted(model, ids, prefix=S - n), expected(sample_work(S - n + 1, n), False)))
    lora = peft.get_peft_model(model, peft.LoraConfig(r=r, target_modules='all-linear'))
    cases.append((f'forward + backward, LoRA r={r}', _counted(lora, ids, True), expected(full, True, r)))
    ok = True
    P, N = [7, 12], [[3, 5], [1, 4]]  # the matmul floor's products against the formula, on ragged lengths
    for rank in (0, r):
        gen, upd, att = agent_products(s, P, N, rank)
        want, gen_att = agent_flops(s, P, N, rank), attention_flops(s, job_work(P, N, 1).keys)
        for part, got_f, want_f in (('generation', products_flops(gen) + gen_att, want['generation']),
                                    ('update', products_flops(upd) + att - gen_att, want['update'])):
            ok &= got_f == want_f
            print(f"{'floor products, ' + ('LoRA r=' + str(rank) if rank else 'full'):38s} {part:13s} counted {got_f:>10,d} "
                  f"formula {want_f:>10,d}  {'ok' if got_f == want_f else 'MISMATCH'}")
    for name, got, want in cases:
        for part in ('mm', 'bmm'):
            err = abs(got[part] - want[part]) / max(want[part], 1)
            ok &= err <= tol
            print(f"{name:38s} {'linear + head' if part == 'mm' else 'attention':13s} counted {got[part]:>10,d} "
                  f"formula {want[part]:>10,d}  {'ok' if err <= tol else 'MISMATCH'} ({err:.2%})")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--check', action='store_true', help='compare the formula with FlopCounterMode; exit 1 on a mismatch')
    ap.add_argument('--peak', action='store_true', help="measure and print this machine's single-thread fp32 matmul peak")
    args = ap.parse_args()
    if args.peak: print(f'single-thread fp32 matmul peak: {matmul_peak() / 1e9:.1f} GFLOP/s')
    if args.check:
        ok = check()
        print('all within 1%' if ok else 'FAILED: the formula disagrees with FlopCounterMode')
        sys.exit(0 if ok else 1)
    if not (args.check or args.peak): ap.print_help()


if __name__ == '__main__': main()
