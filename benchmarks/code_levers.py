"""What the untrained code team scores under the levers of the code main job, before any training: the helper's prompt
and the answer length, with decoding stopped at the code block's closing fence or not.

The untrained SmolLM2-135M-Instruct pair (concatenated) and one agent alone, greedy, on CoopHumanEval's 16 held-out
problems, scored by the pair's reward (`30_evaluation`). The helper prompts: today's `CodeGenEnv.aux_prompt` ('def aux
first') and the earlier one ('earlier'), kept here as it was. One JSON record per setting:

    export COMLRL_MODEL_DIR=../shared/models COMLRL_DATA_DIR=../shared/data
    OMP_NUM_THREADS=1 python benchmarks/code_levers.py --out benchmarks/results/code_levers.json
"""
import argparse, json, sys, time
from pathlib import Path

from comlrl.envs.code import CodeEnv
from comlrl.envs.codegen import CoopHumanEvalEnv
from comlrl.evaluation import agent_policy, evaluate_baseline
from comlrl.models import default_model_path, load_agents
from keep_results import command_line


class EarlierHelperPrompt(CoopHumanEvalEnv):
    "CoopHumanEval with the helper prompt the code main job used until 2026-11-26."
    prompt_templates = {**CoopHumanEvalEnv.prompt_templates, 'aux': (
        "You are the helper in a team of two programmers. Your teammate will write the Python function `{entry_point}` "
        "below and can call a helper function `aux` that you write. Write `aux` so that it computes a useful "
        "part of the solution and returns it.\n\nProblem:\n{prompt}\n\nAnswer with one ```python block that defines "
        "`aux` (with any imports it needs). Do not write `{entry_point}`, tests or example calls.")}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--out', required=True)
    p.add_argument('--lengths', default='96,128,160')
    a = p.parse_args()
    team = load_agents(default_model_path(), num_agents=2)
    envs = {'def aux first': CoopHumanEvalEnv(), 'earlier': EarlierHelperPrompt()}
    items = list(envs['def aux first'].load_dataset(CoopHumanEvalEnv.eval_split))
    rows = []
    def run(prompt, strategy, length, stop):
        pols = [agent_policy(ag, max_completion_length=length, do_sample=False, stop_strings=list(CodeEnv.stop_strings) if stop else None)
                for ag in team]
        t0 = time.time()
        r = evaluate_baseline(pols, envs[prompt], items, strategy)
        row = {'helper_prompt': prompt if strategy != 'single' else None, 'strategy': strategy, 'max_completion_length': length,
               'stop_at_fence': stop, **r.row(), 'seconds': time.time() - t0}
        rows.append(row)
        print(json.dumps(row), flush=True)
    for length in map(int, a.lengths.split(',')):
        run('def aux first', 'single', length, True)
        for prompt in envs: run(prompt, 'concat', length, True)
    run('def aux first', 'concat', 128, False)  # the stop string's effect at today's length
    Path(a.out).write_text(json.dumps({'command': command_line('code_levers.py', sys.argv[1:]), 'rows': rows}, indent=1) + '\n')


if __name__ == '__main__':
    sys.exit(main())
