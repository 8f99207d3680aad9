"""Commands to watch and drive the environment: ``demo``, ``play`` and ``render``."""

from __future__ import annotations

import argparse

from . import types as ca
from .base import Commands


def _demo(args: argparse.Namespace) -> int:
    from ..interactive.demo import run_demo

    return run_demo(
        scenario=args.scenario,
        policy=args.policy,
        steps=args.steps,
        out=args.out,
        seed=args.seed,
        window=args.window,
        preset=args.preset,
        size=args.size,
    )


def _play(args: argparse.Namespace) -> int:
    from ..interactive.play import play_cli

    return play_cli(args)


def _render(args: argparse.Namespace) -> int:
    from ..interactive.demo import render_cli

    return render_cli(args)


def _gallery(args: argparse.Namespace) -> int:
    from ..interactive.gallery import write_gallery

    write_gallery(args.out, args.size, args.columns, args.step)
    return 0


def add_watch_commands(commands: Commands) -> None:
    """``demo``, ``play``, ``render`` and ``gallery``."""
    policy_help = ca.policy_help()

    p = commands.add(
        "demo",
        _demo,
        "watch scripted learners in a crowd: a window, or a GIF when headless",
        "Learners driven by the best scripted baseline of the scene walk to their goals among\n"
        "scripted pedestrians, with the overlays of one walker: what steers it. With a display\n"
        "it opens an interactive window that runs episode after episode until Q (H lists its\n"
        "keys); headless it writes --out and a PNG of step 20 beside it. A new episode starts\n"
        "as soon as every learner has arrived or collided.",
    )
    ca.add_scenario_option(p, None, " (default: the preset's, else circle_crossing)")
    ca.add_preset_option(p)
    p.add_argument(
        "--policy",
        type=ca.policy,
        default=None,
        help="what drives the learners (default: the scene's best scripted baseline): "
        + policy_help,
    )
    p.add_argument(
        "--steps",
        type=ca.int_at_least(1),
        default=120,
        help="steps written when headless, over as many episodes as they take (a window runs "
        "until Q)",
    )
    ca.add_seed_option(p)
    ca.add_size_option(p, 640)
    p.add_argument(
        "--out",
        default="out/crowdsteer_demo.gif",
        help="file written when headless: .gif, or .mp4 with the 'video' extra",
    )
    p.add_argument(
        "--window",
        choices=["auto", "yes", "no"],
        default="auto",
        help="open a window: auto (when a display exists), yes, or no (write --out)",
    )
    ca.add_trust_option(p)

    p = commands.add(
        "play",
        _play,
        "walk learner 0 yourself among the crowd (needs a display)",
        "You drive learner 0 with the arrow keys or WASD (Shift: slowly), or hold the right\n"
        "mouse button to walk toward the cursor. The other learners are driven by --others,\n"
        "the crowd by its steering. The clock runs in real time ([ and ] change the speed,\n"
        "Space pauses, H lists every key). Each episode ends with its metrics on the window\n"
        "and in the terminal; R starts the next one, Q quits.",
    )
    ca.add_scenario_option(p, None, " (default: the preset's, else circle_crossing)")
    ca.add_preset_option(p)
    p.add_argument(
        "--others",
        type=ca.policy,
        default="right_of_way",
        help="what drives the other learners: " + policy_help,
    )
    p.add_argument(
        "--n-learners",
        type=ca.int_at_least(1),
        default=None,
        help="learners in the world, you included (default: the scenario's demo crowd)",
    )
    p.add_argument(
        "--n-pedestrians",
        type=ca.int_at_least(0),
        default=None,
        help="scripted pedestrians (default: the scenario's demo crowd)",
    )
    p.add_argument(
        "--n-flock",
        type=ca.int_at_least(0),
        default=None,
        help="flock units (default: the scenario's demo crowd)",
    )
    p.add_argument(
        "--kinematics",
        choices=["holonomic", "unicycle"],
        default="holonomic",
        help="how learners move: any direction, or forward and turning",
    )
    p.add_argument(
        "--steps",
        type=ca.int_at_least(1),
        default=None,
        help="episode length in steps (default: the environment's, 100)",
    )
    p.add_argument(
        "--episodes",
        type=ca.int_at_least(1),
        default=None,
        help="episodes to play (default: until you quit)",
    )
    p.add_argument(
        "--speed",
        type=float,
        default=1.0,
        choices=[0.25, 0.5, 1.0, 2.0, 4.0],
        help="clock speed; 1 is real time",
    )
    ca.add_seed_option(p)
    ca.add_trust_option(p)

    p = commands.add(
        "render",
        _render,
        "write episodes of a policy to a GIF or MP4, or one step to a PNG",
        "Episodes run until every learner has arrived or collided (or --steps). With --out\n"
        "NAME.png the step --frame of the first episode is written; with --overlays the debug\n"
        "overlays follow the first learner still walking (its baseline's look-ahead and\n"
        "detection box too), or the pedestrian --overlay-body names.",
    )
    ca.add_scenario_option(p, None, " (default: the preset's, else circle_crossing)")
    ca.add_preset_option(p)
    p.add_argument(
        "--policy",
        type=ca.policy,
        default=None,
        help="what drives the learners (default: the scene's best scripted baseline): "
        + policy_help,
    )
    p.add_argument("--episodes", type=ca.int_at_least(1), default=1, help="episodes written")
    ca.add_seed_option(p)
    p.add_argument(
        "--steps", type=ca.int_at_least(1), default=200, help="step limit of each episode"
    )
    p.add_argument(
        "--out",
        default="out/episode.gif",
        help=".gif, .mp4 (the 'video' extra), or .png or .svg (a vector drawing, without\n"
        "overlays) for the one step --frame",
    )
    ca.add_size_option(p)
    p.add_argument(
        "--frame",
        type=ca.int_at_least(0),
        default=20,
        help="the step written with --out NAME.png (at most --steps)",
    )
    p.add_argument("--overlays", action="store_true", help="draw every debug overlay")
    p.add_argument(
        "--style",
        choices=["paper", "debug"],
        default="paper",
        help="paper: the scene, labels, legend and scale bar; debug: with a heads-up line of the\n"
        "scenario, policy, episode, step and counts on every frame",
    )
    p.add_argument(
        "--overlay-body",
        choices=["learner", "pedestrian"],
        default="learner",
        help="whose overlays --overlays draws: the first learner still walking, or the first "
        "pedestrian steering with a look-ahead or a detection box (else the first one)",
    )
    ca.add_trust_option(p)

    p = commands.add(
        "gallery",
        _gallery,
        "one frame of every scenario, tiled into one PNG (the README's picture)",
        "Each tile is `crowdsteer render --style debug --overlays --overlay-body pedestrian\n"
        "--frame STEP` of one scenario: its demo crowd, the scene's best scripted baseline\n"
        "driving the learners, and the overlays of one pedestrian that steers with a look-ahead.",
    )
    p.add_argument(
        "--out",
        default="out/scenarios.png",
        help="the PNG written (docs/scenarios.png: the README's)",
    )
    ca.add_size_option(p, 560)
    p.add_argument("--columns", type=ca.int_at_least(1), default=2, help="tiles per row")
    p.add_argument("--step", type=ca.int_at_least(1), default=15, help="the step drawn")
