"""Commands that train and look at training: ``train`` (Stable-Baselines3), ``train-rllib`` and
``plot-curves``.

The training scripts declare their options as one ``Args`` dataclass at their top; the flags are
made from it here (``dataclass_flags``), so ``crowdsteer train --algo ppo --help`` lists them.
"""

from __future__ import annotations

import argparse

from ..support import preflight
from . import types as ca
from .base import Commands
from .dataclass_flags import parse_dataclass

TRAIN_MODULES = ("stable_baselines3", "torch")
RUNS = "runs/marl_priors"
"""The run folders of marl-priors and marl-shaping (``priors_study.PriorsStudy.runs``)."""


def _train(args: argparse.Namespace) -> int:
    rest = list(args.rest) + (["--help"] if args.help else [])
    if not all(preflight.has_module(m) for m in TRAIN_MODULES):
        if args.help:
            args.parser.print_help()
            hint = preflight.install_hint("torch")
            print(f"\nThe training options need the 'train' extra: {hint}")
            return 0
        preflight.require(TRAIN_MODULES, "crowdsteer train")
    if args.algo == "ppo":
        from ..rl import ppo as algo
    else:
        from ..rl import sac as algo
    options = parse_dataclass(algo.Args, rest, prog=f"crowdsteer train --algo {args.algo}")
    return _leaving_no_refused_run(algo.train, options)


def _leaving_no_refused_run(train, options) -> int:
    """``train(options)``; a run refused after it made its folder (the folder holds nothing but
    its ``args.json``) takes the folder with it."""
    import shutil
    from pathlib import Path

    from ..rl.runs import new_run_folders

    parent = Path(options.out)
    before = {p.name for p in parent.iterdir()} if parent.is_dir() else set()
    try:
        return train(options)
    except BaseException:
        for folder in new_run_folders(parent, before):
            shutil.rmtree(folder, ignore_errors=True)
        raise


def _train_rllib(args: argparse.Namespace) -> int:
    from ..rl import rllib_ppo

    options = parse_dataclass(rllib_ppo.Args, args.rest, prog="crowdsteer train-rllib")
    return rllib_ppo.train(options)


def _train_generalist(args: argparse.Namespace) -> int:
    preflight.require(TRAIN_MODULES, "crowdsteer train-generalist")
    from ..rl import generalist

    options = parse_dataclass(generalist.Args, args.rest, prog="crowdsteer train-generalist")
    return _leaving_no_refused_run(generalist.train, options)


def _study(args: argparse.Namespace) -> int:
    preflight.require((*TRAIN_MODULES, "matplotlib"), "crowdsteer study")
    from ..rl import study

    options = parse_dataclass(study.Args, args.rest, prog="crowdsteer study")
    return study.run(options)


def _dataset(args: argparse.Namespace) -> int:
    preflight.require(("minari", "h5py"), "crowdsteer dataset")
    from ..rl import dataset

    options = parse_dataclass(dataset.Args, args.rest, prog="crowdsteer dataset")
    return dataset.write(options)


def _plot_curves(args: argparse.Namespace) -> int:
    preflight.require(("matplotlib",), "crowdsteer plot-curves")
    from ..rl.plot_curves import plot_curves

    baselines = {}
    for item in args.baseline:
        name, _, value = item.partition("=")
        baselines[name] = float(value)
    print(plot_curves(args.runs, args.out, args.labels, args.title, baselines, args.x))
    return 0


def _crowdnav_recipe(args: argparse.Namespace) -> int:
    from ..rl import crowdnav_recipe as recipe

    if args.what == "command":
        print(recipe.command(args.seed, recipe=args.recipe))
        return 0
    preflight.require(TRAIN_MODULES, "crowdsteer crowdnav-recipe")
    if args.what == "train":
        recipe.train(args.seed, args.out, args.name, recipe=args.recipe)
        return 0
    rows = recipe.validate(args.runs, args.episodes, args.seed)
    keys = ("success_rate", "collision_rate", "timeout_rate", "time_to_goal")
    for row in rows:
        print(row["run"], " ".join(f"{k}={row[k]:.4f}" for k in keys))
    print("best:", recipe.best_run(rows)["run"])
    return 0


def _add_crowdnav_recipe(commands: Commands) -> None:
    from ..rl.crowdnav_recipe import RECIPES, VALIDATION_EPISODES, VALIDATION_SEED

    p = commands.add(
        "crowdnav-recipe",
        _crowdnav_recipe,
        "the shipped CrowdNav policy's recipe: train a seed, validate runs (the 'train' extra)",
        "train: the recipe for one seed, with the run's CPU time in RUN/cpu.json; validate:\n"
        "runs scored on the validation episodes (never CrowdNav's test cases) and the best one\n"
        "named; command: the equivalent crowdsteer train command line.",
    )
    sub = p.add_subparsers(dest="what", required=True, metavar="WHAT")
    t = sub.add_parser("train", help="train the recipe for one seed")
    t.add_argument("--seed", type=int, default=0, help="the run's seed")
    t.add_argument("--out", default="runs", help="folder of the run folders")
    t.add_argument(
        "--name",
        default=None,
        help="the run's name (crowdnav_sSEED, or crowdnav_RECIPE_sSEED, when absent)",
    )
    recipe_help = (
        "attention: the shipped policy's (the humans' states); lidar: the own state and a "
        "360-degree lidar, no human state"
    )
    t.add_argument("--recipe", choices=sorted(RECIPES), default="attention", help=recipe_help)
    v = sub.add_parser("validate", help="score runs on the validation episodes")
    v.add_argument("runs", nargs="+", help="run folders (or model.zip files)")
    v.add_argument("--episodes", type=int, default=VALIDATION_EPISODES, help="episodes per run")
    v.add_argument("--seed", type=int, default=VALIDATION_SEED, help="first world seed")
    ca.add_trust_option(v)
    c = sub.add_parser("command", help="print the recipe's crowdsteer train command")
    c.add_argument("--seed", type=int, default=0, help="the run's seed")
    c.add_argument("--recipe", choices=sorted(RECIPES), default="attention", help=recipe_help)


def _marl_priors(args: argparse.Namespace) -> int:
    from dataclasses import replace

    preflight.require(TRAIN_MODULES, "crowdsteer marl-priors")
    from ..marl.priors_study import PriorsStudy, run

    fields = {"tasks": tuple(args.tasks), "runs": args.runs, "out": args.out, "jobs": args.jobs}
    run(replace(PriorsStudy(), **fields))
    return 0


def _add_marl_priors(commands: Commands) -> None:
    from ..marl import TASKS

    p = commands.add(
        "marl-priors",
        _marl_priors,
        "shared PPO with and without a baseline to correct, per MARL task (the 'train' extra)",
        "Per task: the baselines on validation episodes (the best is the reference), shared\n"
        "PPO trained direct and residual on the reference with 3 seeds, the variant chosen on\n"
        "validation, then it and the baselines scored once on the held-out episodes.",
    )
    _add_study_options(p, list(TASKS), "docs/marl_priors.json")


def _add_study_options(p: argparse.ArgumentParser, tasks: list[str], out: str) -> None:
    """The options marl-priors and marl-shaping share: tasks, run folders, JSON, processes."""
    from pathlib import Path

    from ..marl import TASKS

    p.add_argument("--tasks", nargs="+", default=tasks, choices=TASKS, help="the tasks")
    p.add_argument("--runs", type=Path, default=Path(RUNS), help="folder of the runs")
    p.add_argument("--out", type=Path, default=Path(out), help="the JSON written")
    p.add_argument("--jobs", type=ca.int_at_least(1), default=2, help="trainings at a time")


def _marl_shaping(args: argparse.Namespace) -> int:
    from dataclasses import replace

    preflight.require(TRAIN_MODULES, "crowdsteer marl-shaping")
    from ..marl.shaping_study import ShapingStudy, run

    fields = {"tasks": tuple(args.tasks), "seeds": tuple(args.seeds), "runs": args.runs}
    fields["variants"] = ("direct", *(v for v in args.variants if v != "direct"))
    run(replace(ShapingStudy(), out=args.out, jobs=args.jobs, **fields))
    return 0


def _add_marl_shaping(commands: Commands) -> None:
    p = commands.add(
        "marl-shaping",
        _marl_shaping,
        "does shaping toward a baseline pay? PPO alone vs three priors (the 'train' extra)",
        "Per task: shared PPO alone, with cosine shaping, potential-based shaping and residual\n"
        "actions on the task's best baseline, several seeds each; learning speed and final\n"
        "validation success against PPO alone with 95 % intervals, and the seeds per arm\n"
        "that give 80 % power to detect 0.05.",
    )
    seeds = [0, 1, 2, 3, 4]
    p.add_argument("--seeds", nargs="+", type=ca.int_at_least(0), default=seeds, help="per variant")
    from ..marl import SHAPING_VARIANTS

    p.add_argument(
        "--variants",
        nargs="+",
        choices=SHAPING_VARIANTS,
        default=list(SHAPING_VARIANTS),
        help="the variants trained (direct, PPO alone, is always trained: the comparison)",
    )
    tasks = ["circle_crossing", "corridor", "crossing_flows"]
    _add_study_options(p, tasks, "docs/marl_shaping.json")


MARL_MODULES = ("torchrl", "benchmarl")


def _marl_benchmarl_priors(args: argparse.Namespace) -> int:
    from pathlib import Path

    preflight.require(MARL_MODULES, "crowdsteer marl-benchmarl-priors")
    from ..marl.priors_benchmarl import CLONES_FILE, BenchmarlPriors, clones, run

    if args.clones:
        clones(tuple(args.clones), BenchmarlPriors(), Path(CLONES_FILE))
        return 0
    run(BenchmarlPriors(prior=args.prior, jobs=args.jobs))
    return 0


def _add_marl_benchmarl_priors(commands: Commands) -> None:
    from ..marl import PRIOR_NAMES

    p = commands.add(
        "marl-benchmarl-priors",
        _marl_benchmarl_priors,
        "BenchMARL's IPPO with a baseline as prior, per MARL task (the 'marl' extra)",
        "Per task: IPPO through BenchMARL's command line, seeds 0-2, with the task's reference\n"
        "(docs/marl_priors.json) as residual actions, a warm start (with DAgger rounds), or\n"
        "alone; each final checkpoint scored once on the held-out episodes. --clones scores\n"
        "the warm start alone, before any RL, on the validation episodes.",
    )
    p.add_argument("--prior", choices=PRIOR_NAMES, default="residual", help="the prior")
    p.add_argument("--jobs", type=ca.int_at_least(1), default=2, help="trainings at a time")
    p.add_argument(
        "--clones",
        nargs="+",
        type=ca.int_at_least(0),
        default=[],
        help="DAgger rounds whose clones to score on validation (e.g. 0 3)",
    )


def _marl_study(args: argparse.Namespace) -> int:
    from dataclasses import replace

    preflight.require((*MARL_MODULES, *TRAIN_MODULES), "crowdsteer marl-study")
    from ..marl import results, study

    rows = ("mappo", *(a for a in args.algorithms if a != "mappo"))
    runs = replace(study.MarlStudy(), runs=args.runs, jobs=args.jobs, algorithms=rows)
    study.train(runs)
    results.main(replace(results.Study(), runs=runs, out=args.out))
    return 0


def _add_marl_study(commands: Commands) -> None:
    from pathlib import Path

    from ..marl import STUDY_ALGORITHMS

    p = commands.add(
        "marl-study",
        _marl_study,
        "the MARL table: MAPPO, IPPO, MASAC, IPPO + DAgger, shared PPO (the 'marl' extra)",
        "Every task, seeds 0-2: MAPPO with each critic setting, the one chosen on validation\n"
        "episodes; MASAC with it; IPPO alone and from the DAgger warm start; shared PPO. Then\n"
        "every final policy and baseline scored once on the held-out episodes, written to the\n"
        "marl-eval file, the summary and the curves. Finished runs are kept.",
    )
    p.add_argument("--runs", type=Path, default=Path("runs/marl"), help="folder of the runs")
    p.add_argument("--out", type=Path, default=Path("docs"), help="folder of the files written")
    p.add_argument(
        "--algorithms",
        nargs="+",
        choices=STUDY_ALGORITHMS,
        default=["mappo", "ippo", "ippo_dagger"],
        help="the BenchMARL rows (MAPPO always: the critic is chosen on its runs)",
    )
    p.add_argument("--jobs", type=ca.int_at_least(1), default=2, help="trainings at a time")


def baseline_line(text: str) -> str:
    """Argument type: ``NAME=SUCCESS_RATE`` with a rate in [0, 1]."""
    name, sep, value = text.partition("=")
    try:
        rate = float(value)
    except ValueError:
        rate = float("nan")
    if not (sep and name and 0.0 <= rate <= 1.0):
        raise argparse.ArgumentTypeError(
            f"must be NAME=SUCCESS_RATE with a rate in [0, 1], got {text!r}"
        )
    return text


def add_train_commands(commands: Commands) -> None:
    """``train``, ``train-rllib`` and ``plot-curves``."""
    p = commands.add(
        "train",
        _train,
        "train with Stable-Baselines3 (the 'train' extra); --help lists the options",
        "Trains one shared policy over every learner of every world. --algo chooses PPO or\n"
        "SAC; every other option belongs to that algorithm's Args (crowdsteer train --algo\n"
        "ppo --help lists them). Needs the 'train' extra: torch==2.13.0 (its CPU build) first,\n"
        "then pip install -e '.[train]' in the checkout.",
        pass_through=True,
        add_help=False,
    )
    p.add_argument("--algo", choices=["ppo", "sac"], default="ppo", help="the algorithm")
    p.add_argument("-h", "--help", action="store_true", help="show the training options")
    p.set_defaults(parser=p)

    commands.add(
        "train-rllib",
        _train_rllib,
        "multi-agent PPO with Ray RLlib (the 'rllib' extra); --help lists the options",
        "Every learner is an RLlib agent sharing one policy; checkpoints reload with\n"
        "Algorithm.from_checkpoint and score with crowdsteer evaluate --policy DIR. Ray pins its\n"
        "own Gymnasium: install the 'rllib' extra in an environment of its own.",
        pass_through=True,
        add_help=False,
    )

    commands.add(
        "train-generalist",
        _train_generalist,
        "one PPO policy over every scene, with steering priors (the 'train' extra)",
        "Trains one shared policy over the scenario mix (every benchmark scene, crowd sizes\n"
        "and pedestrian behaviours drawn per episode), with optional residual actions, cosine\n"
        "or potential-based shaping and a behaviour-cloning warm start; --help lists them.",
        pass_through=True,
        add_help=False,
    )
    commands.add(
        "study",
        _study,
        "which steering prior speeds learning: curves over seeds (the 'train' extra)",
        "Trains each prior (none, cosine, potential, residual, bc) with several seeds on the\n"
        "scenario mix and plots success against environment steps with the spread over seeds,\n"
        "against the best scripted baseline on the same episodes.",
        pass_through=True,
        add_help=False,
    )
    commands.add(
        "dataset",
        _dataset,
        "a Minari dataset of baseline episodes (the 'dataset' extra); --help lists the options",
        "Records episodes of one learner driven by scripted baselines (in turn) and writes them\n"
        "as a Minari dataset, which minari.load_dataset and offline-RL libraries read back.",
        pass_through=True,
        add_help=False,
    )

    _add_crowdnav_recipe(commands)
    _add_marl_priors(commands)
    _add_marl_shaping(commands)
    _add_marl_benchmarl_priors(commands)
    _add_marl_study(commands)

    p = commands.add(
        "plot-curves",
        _plot_curves,
        "learning curves of training runs (the 'train' extra)",
        "Success (solid) and collision (dashed) rates of each run's evaluations against\n"
        "environment steps, from the progress.csv the training scripts write.",
    )
    p.add_argument("runs", nargs="+", help="run directories (or progress.csv files)")
    p.add_argument("--labels", nargs="*", default=None, help="one label per run")
    p.add_argument("--out", default="learning_curves.png", help="the PNG written")
    p.add_argument("--title", default="", help="title of the plot")
    p.add_argument(
        "--x", choices=["timesteps", "wall_s", "cpu_s"], default="timesteps", help="the x axis"
    )
    p.add_argument(
        "--baseline",
        action="append",
        type=baseline_line,
        default=[],
        help="NAME=SUCCESS_RATE drawn as a horizontal line (repeatable)",
    )
