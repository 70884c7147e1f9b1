"""Does the untrained main agent call its teammate's helper at all? (issue 40) Before any reward can teach a behaviour,
the policy must sample it: for each `prompt_style` of `CodeGenEnv`, the untrained team (SmolLM2-135M-Instruct, the
code main job's settings: 128 new tokens) answers the 16 held-out CoopHumanEval problems greedily and with
`--num_samples` samples at the job's temperature. For each, this prints and writes the share of main functions that
call `aux` and that use its value (`aux_usage`), the team's reward (reference weights) and tests-passed share.

    export COMLRL_MODEL_DIR=../shared/models COMLRL_DATA_DIR=../shared/data
    OMP_NUM_THREADS=1 python benchmarks/code_prompt_probe.py --styles reference,owned,skeleton --out benchmarks/results/code_variants/prompt_probe.json

(run it before `code_variants.py --out benchmarks/results/code_variants`, whose MANIFEST lists it).
"""
import argparse, json, sys, time
from pathlib import Path

from comlrl.cli import load_run
from comlrl.core import make_env
from comlrl.envs.code import parse_code
from comlrl.envs.codegen import PROMPT_STYLES, aux_usage
from comlrl.evaluation import agent_policy
from keep_results import command_line


def probe(trainer, env, items, kw, k):
    "k joint actions per item from the untrained team under `env`'s prompts: the shares that call / use aux, reward, tests."
    pols = [agent_policy(ag, **kw) for ag in trainer.agents]
    outs = [pols[i]([env.formatters[i](it) for it in items], k) for i in range(2)]  # [agent][item][k]
    auxs = [o for per in outs[0] for o in per]
    mains = [o for per in outs[1] for o in per]
    its = [it for it in items for _ in range(k)]
    fns = [parse_code(m).function(it['entry_point']) for m, it in zip(mains, its)]
    us = [aux_usage(fn) for fn in fns if fn is not None]
    r = env.reward_func(auxs, mains, batch_items=its)
    n = len(mains)
    return {'answers': n, 'aux_called': sum(u.called for u in us) / n, 'aux_used': sum(u.used for u in us) / n,
            'reward': sum(r['reward']) / n, 'tests': sum(r['pass_rate']) / n}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--styles', default=','.join(PROMPT_STYLES))
    p.add_argument('--num_samples', type=int, default=4, help='sampled answers per problem (at the preset temperature)')
    p.add_argument('--run', default='benchmarks/results/coophumaneval_main/seed-0',
                   help="a run of the code main job: its model, settings and eval split, before training (no weights needed)")
    p.add_argument('--out', default=None)
    a = p.parse_args()
    trainer, rows = load_run(a.run, untrained=True), []
    items = list(trainer.eval_dataset)
    for style in a.styles.split(','):
        env = make_env(trainer.env.name, **{**trainer.env.kwargs, 'prompt_style': style})
        t0 = time.time()
        for mode, kw, k in (('greedy', trainer.generation_kwargs(greedy=True), 1),
                            (f'T={trainer.args.temperature}', trainer.generation_kwargs(greedy=False), a.num_samples)):
            row = {'style': style, 'answers_from': mode, **probe(trainer, env, items, kw, k)}
            rows.append(row)
            print(json.dumps(row), flush=True)
        print(f'{style}: {time.time() - t0:.0f} s', file=sys.stderr)
    if a.out:
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
        Path(a.out).write_text(json.dumps({'command': command_line('code_prompt_probe.py', sys.argv[1:]), 'rows': rows}, indent=1) + '\n')


if __name__ == '__main__':
    main()
