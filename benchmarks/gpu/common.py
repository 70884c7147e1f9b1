"""What every part of the GPU check shares, with no import of comlrl (the CoMLRL 1.4.3 job imports this module too).

- `QWEN`: the preset models' architectures, written out (the hub's config.json of Qwen2.5-0.5B-Instruct and
  Qwen2.5-1.5B-Instruct; the machine has no weights and no hub), and `TINY` for the CPU dry run;
- `build_tokenizer`: a byte-level BPE tokenizer of the model's real size, with Qwen's special tokens at Qwen's ids
  and its ChatML template, built in memory (Qwen's own tokenizer is not on the machine either);
- `random_model`: a randomly initialised `Qwen2ForCausalLM`, created directly on the device in the preset's dtype;
- `tldr_prompt` / `tldr_prompts`: TL;DR-shaped prompts of an exact number of tokens;
- `forbid_tokens`: the speed job's forced length (every sample exactly `max_new_tokens` long, for every library);
- `Timer`, `peak_memory_bytes`, `versions`, `write_json`.
"""
import importlib.metadata, json, os, platform, random, time
from contextlib import contextmanager
from pathlib import Path

import torch

# The fields of each model's config.json (hub, 2024-09; `use_sliding_window` is false, so the window fields do nothing).
QWEN = {
    'Qwen/Qwen2.5-0.5B-Instruct': dict(
        model_type='qwen2', hidden_size=896, intermediate_size=4864, num_hidden_layers=24, num_attention_heads=14,
        num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True, hidden_act='silu', rms_norm_eps=1e-6,
        rope_theta=1000000.0, max_position_embeddings=32768, use_sliding_window=False, sliding_window=32768,
        max_window_layers=21, attention_dropout=0.0, bos_token_id=151643, eos_token_id=151645),
    'Qwen/Qwen2.5-1.5B-Instruct': dict(
        model_type='qwen2', hidden_size=1536, intermediate_size=8960, num_hidden_layers=28, num_attention_heads=12,
        num_key_value_heads=2, vocab_size=151936, tie_word_embeddings=True, hidden_act='silu', rms_norm_eps=1e-6,
        rope_theta=1000000.0, max_position_embeddings=32768, use_sliding_window=False, sliding_window=32768,
        max_window_layers=21, attention_dropout=0.0, bos_token_id=151643, eos_token_id=151645),
}
# The dry run's model: Qwen2's architecture at a size a CPU runs in seconds (its tokenizer is built to this vocabulary).
TINY = dict(model_type='qwen2', hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
            num_key_value_heads=2, vocab_size=1024, tie_word_embeddings=True, hidden_act='silu', rms_norm_eps=1e-6,
            rope_theta=1000000.0, max_position_embeddings=4096, use_sliding_window=False, attention_dropout=0.0)
SPEED_MODEL = 'Qwen/Qwen2.5-1.5B-Instruct'  # the speed run's shape
SPECIAL_TOKENS = ('<|endoftext|>', '<|im_start|>', '<|im_end|>')  # Qwen's ids: the first three after the regular tokens
CHAT_TEMPLATE = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}<|im_end|>\n"
                 "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def model_config(name: str, dry_run: bool) -> dict:
    "The config fields of hub model `name` (a key of `QWEN`), or `TINY` in a dry run. Raises `KeyError` for another name."
    if dry_run:
        ids = special_ids(TINY['vocab_size'])
        return dict(TINY, bos_token_id=ids['<|endoftext|>'], eos_token_id=ids['<|im_end|>'])
    if name not in QWEN: raise KeyError(f"no architecture of {name!r} is written out in benchmarks/gpu/common.py (QWEN)")
    return dict(QWEN[name])


def regular_tokens(vocab_size: int) -> int:
    "Regular (non-special) tokens of the tokenizer for a model of `vocab_size` rows: Qwen's 151,643 at its size."
    return 151643 if vocab_size == 151936 else vocab_size - len(SPECIAL_TOKENS)


def special_ids(vocab_size: int) -> dict:
    "The special tokens' ids, right after the regular tokens (Qwen's own: 151643, 151644, 151645)."
    return {t: regular_tokens(vocab_size) + i for i, t in enumerate(SPECIAL_TOKENS)}


def build_tokenizer(vocab_size: int):
    """A byte-level BPE tokenizer with `regular_tokens(vocab_size)` regular tokens (the 256 bytes, every byte pair, then
    pairs extended by one byte), then Qwen's special tokens: pad `<|endoftext|>`, eos `<|im_end|>`, and ChatML's
    template. Left padding. Its length never exceeds `vocab_size`. Text round-trips through it exactly."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast
    n = regular_tokens(vocab_size)
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    if n < len(alphabet): raise ValueError(f"vocab_size {vocab_size} is below the 256 bytes a byte-level tokenizer needs")
    vocab, merges = {c: i for i, c in enumerate(alphabet)}, []
    def add(a, b):
        vocab[a + b] = len(vocab); merges.append((a, b))
    pairs = ((a, b) for a in alphabet for b in alphabet)
    while len(vocab) < n and (ab := next(pairs, None)) is not None: add(*ab)
    two = list(vocab)[len(alphabet):]  # then byte pairs extended by one byte, round after round
    grown = ((ab, alphabet[(j + r) % len(alphabet)]) for r in range(len(alphabet)) for j, ab in enumerate(two))
    while len(vocab) < n: add(*next(grown))
    tk = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    tk.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tk.decoder = decoders.ByteLevel()
    tk.add_special_tokens(list(SPECIAL_TOKENS))
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token='<|endoftext|>', eos_token='<|im_end|>',
                                  additional_special_tokens=['<|im_start|>'], padding_side='left')
    tok.chat_template = CHAT_TEMPLATE
    assert len(tok) <= vocab_size, (len(tok), vocab_size)
    return tok


def random_model(config: dict, dtype: torch.dtype, device, seed: int = 0):
    "A randomly initialised `Qwen2ForCausalLM` of `config`'s fields, built on `device` in `dtype`, in eval mode, SDPA attention."
    from transformers import Qwen2Config, Qwen2ForCausalLM
    cfg = Qwen2Config(**{k: v for k, v in config.items() if k != 'model_type'})
    cfg._attn_implementation = 'sdpa'
    old = torch.get_default_dtype()
    torch.manual_seed(seed)
    try:
        torch.set_default_dtype(dtype)
        with torch.device(device): model = Qwen2ForCausalLM(cfg)
    finally: torch.set_default_dtype(old)
    ids = special_ids(cfg.vocab_size)
    model.generation_config.eos_token_id = ids['<|im_end|>']
    model.generation_config.pad_token_id = ids['<|endoftext|>']
    return model.eval()


WORDS = ("the my her his we they it was had said told asked after before because but so then when while about work "
         "friend boyfriend girlfriend mother father sister brother roommate boss job money rent apartment car school "
         "college class weekend month year week night morning party dinner phone text call message fight talk "
         "relationship months years ago started stopped really just never always still again together apart help "
         "advice think feel know want need wanted going went come came back home house family dog cat sorry happy angry").split()


def _exact_fill(deficit: int, pieces: dict) -> list:
    "Pieces (text -> its tokens) whose tokens sum to `deficit` (a coin change); raises `ValueError` when none do."
    best = {0: []}
    for x in range(1, deficit + 1):
        for p, c in pieces.items():
            if c <= x and x - c in best: best[x] = best[x - c] + [p]; break
    if deficit not in best: raise ValueError(f"no words fill the last {deficit} tokens of a prompt exactly")
    return best[deficit]


def tldr_prompt(tokenizer, tokens: int, rng: random.Random) -> str:
    """A TL;DR-shaped prompt (subreddit, title, post, 'TL;DR:') of exactly `tokens` tokens under `tokenizer`, without
    special tokens: random words, then words (some ending in '.') whose token counts add up to the rest. Byte-level
    pre-tokenisation splits at spaces and punctuation, so the counts add; the whole is counted again to be sure.
    Raises `ValueError` if `tokens` is too short for the frame."""
    count = lambda s: len(tokenizer(s, add_special_tokens=False).input_ids)
    head = f"SUBREDDIT: r/relationships\n\nTITLE: {' '.join(rng.choice(WORDS) for _ in range(5))}\n\nPOST:"
    tail = "\n\nTL;DR:"
    if (n := count(head + tail)) + 16 > tokens: raise ValueError(f"{tokens} tokens cannot hold a TL;DR prompt ({n} tokens of frame)")
    pieces = {}
    for w in WORDS:
        for p in (' ' + w, ' ' + w + '.'): pieces.setdefault(count(p), p)  # one piece for each count
    pieces = {p: c for c, p in sorted(pieces.items())}
    body = []
    while n + 16 < tokens:
        body.append(' ' + rng.choice(WORDS)); n += count(body[-1])
    while n > tokens - 12:
        n -= count(body.pop())
    text = head + ''.join(body + _exact_fill(tokens - n, pieces)) + tail
    if count(text) != tokens: raise ValueError(f"could not build a prompt of exactly {tokens} tokens (got {count(text)})")
    return text


def tldr_prompts(tokenizer, n: int, tokens, seed: int = 0) -> list[str]:
    "n TL;DR-shaped prompts; `tokens` is one length for all or a list of n lengths."
    rng = random.Random(seed)
    lengths = [tokens] * n if isinstance(tokens, int) else list(tokens)
    return [tldr_prompt(tokenizer, t, rng) for t in lengths]


def length_reward(*completions) -> list[float]:
    "A cheap reward (so that the reward is not what is measured): agent i is asked for about 20·(i + 1) words."
    return [sum(-abs(len(c.split()) - 20 * (i + 1)) / (20 * (i + 1)) for i, c in enumerate(joint)) for joint in zip(*completions)]


def forbid_tokens(model, token_ids) -> torch.utils.hooks.RemovableHandle:
    """Make `token_ids` (the EOS and pad tokens) impossible to sample: a hook on the output embedding sets their logits
    to -inf whenever gradients are off (decoding, in every library), and leaves the training forwards untouched, so
    every sample runs to max_new_tokens. Returns the hook's handle."""
    ids = sorted({int(t) for t in token_ids})
    def hook(module, args, out):
        if torch.is_grad_enabled(): return None
        out[..., ids] = float('-inf')
        return out
    return model.get_output_embeddings().register_forward_hook(hook)


# ---- the speed job, the same for every library -----------------------------------------------------------------

def speed_sizes(dry_run: bool, quick: bool) -> dict:
    """The speed job, the same for every library: B prompts of P tokens, K samples of exactly C new tokens per agent,
    one warm-up step then `timed` steps. Quick: 128 new tokens and one timed step. Dry run: tiny."""
    if dry_run: return dict(B=2, K=2, P=128, C=8, warmup=1, timed=1)
    return dict(B=8, K=8, P=128, C=128 if quick else 256, warmup=1, timed=1 if quick else 3)


def speed_job(device, dry_run: bool, quick: bool):
    """What every library's speed run starts from: the sizes (`speed_sizes`), the tokenizer, the random Qwen2.5-1.5B in
    bfloat16 on `device` that cannot end a sample early (`forbid_tokens`), its stop ids, and the time it started loading."""
    from types import SimpleNamespace
    s = speed_sizes(dry_run, quick)
    cfg = model_config(SPEED_MODEL, dry_run)
    tok = build_tokenizer(cfg['vocab_size'])
    stop_ids = [tok.eos_token_id, tok.pad_token_id]
    t0 = time.perf_counter()
    model = random_model(cfg, torch.bfloat16, device)
    forbid_tokens(model, stop_ids)  # full copies of the model keep the hook (deepcopy)
    return SimpleNamespace(sizes=s, tokenizer=tok, model=model, stop_ids=stop_ids, started=t0)


def decode_weight_bytes(model, adapters: int = 1) -> int:
    "Bytes of weights one decoding step of one agent reads: the base, plus one of the `adapters` LoRA adapters it holds."
    total = sum(q.numel() * q.element_size() for q in model.parameters())
    lora = sum(q.numel() * q.element_size() for n, q in model.named_parameters() if 'lora_' in n)
    return total - lora + lora // max(adapters, 1)


def speed_record(library: str, num_agents: int, lora: bool, sizes: dict, per_step: list, peak: int, load_s: float,
                 lengths: list, weight_bytes: int, **extra) -> dict:
    """One library's speed run as the report reads it: the job, each step's seconds split into generation, reward and
    the rest (the update), the warm-up apart. The same for comlrl, TRL and CoMLRL 1.4.3."""
    rows = [{'step': st.get('step', 0.0), 'generation': st.get('generation', 0.0), 'reward': st.get('reward', 0.0)} for st in per_step]
    for r in rows: r['update'] = r['step'] - r['generation'] - r['reward']
    return {'library': library, 'num_agents': num_agents, 'lora': lora, 'lora_r': 32 if lora else 0, **sizes,
            'prompts_per_step': extra.pop('prompts_per_step', sizes['B']), 'steps': rows, 'warmup_steps': sizes['warmup'],
            'samples': len(lengths), 'new_tokens_per_sample': sorted(set(lengths)), 'peak_memory_bytes': peak,
            'load_seconds': round(load_s, 2), 'decode_weight_bytes': weight_bytes, **extra}


def completion_lengths(sequences: torch.Tensor, prompt_len: int, stop_ids: list) -> list:
    "Tokens of each generated row up to and including its first stop token (all of them when it has none)."
    new = sequences[:, prompt_len:].cpu()
    stop = torch.isin(new, torch.tensor(stop_ids))
    first = torch.where(stop.any(1), stop.int().argmax(1) + 1, torch.full((new.shape[0],), new.shape[1]))
    return first.tolist()



# ---- measuring ---------------------------------------------------------------------------------------------------

def sync(device):
    "Wait for the device's queued work (CUDA), so that a wall-clock time covers it."
    if torch.device(device).type == 'cuda': torch.cuda.synchronize()


class Timer:
    "Wall-clock seconds of named phases, each call appended (`with timer('generation'): ...`), synchronised with the device."
    def __init__(self, device): self.device, self.seconds = device, {}

    @contextmanager
    def __call__(self, name: str):
        sync(self.device); t = time.perf_counter()
        try: yield
        finally:
            sync(self.device); self.seconds.setdefault(name, []).append(time.perf_counter() - t)


def peak_memory_bytes(device) -> int:
    "The process's peak so far: the CUDA allocator's peak on a GPU, the peak resident set (VmHWM, Linux) on a CPU."
    if torch.device(device).type == 'cuda': return int(torch.cuda.max_memory_allocated())
    for line in open('/proc/self/status'):
        if line.startswith('VmHWM:'): return int(line.split()[1]) * 1024
    raise RuntimeError("the CPU's peak memory is read from Linux's /proc/self/status, which this system lacks")


def versions(*names: str) -> dict:
    "Installed versions of the named distributions (None when absent), and Python's."
    out = {'python': platform.python_version()}
    for n in names:
        try: out[n] = importlib.metadata.version(n)
        except importlib.metadata.PackageNotFoundError: out[n] = None
    return out


def write_json(path, obj):
    "Write `obj` as JSON atomically (a part's result appears whole or not at all)."
    path = Path(path); tmp = path.with_suffix('.tmp')
    tmp.write_text(json.dumps(obj, indent=1, default=float)); os.replace(tmp, path)
