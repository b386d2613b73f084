"""Speed of the label-function sandbox: a batch of trajectories against a strategy graph's functions.

Verifies ``--trajectories`` (default 64) synthetic shop trajectories of ``--steps`` steps against ``--functions``
(default 10) label functions in the paper's shape, through :func:`gui_envs.verifiers.run_label_functions` (one
reused worker process, parse-first whitelist included), after one warm-up call that starts the worker. Target:
well under a second per batch (issue 14).

Usage::

    python benchmarks/verifier_speed.py [--trajectories 64] [--functions 10] [--steps 12] [--repeats 3]
"""

from __future__ import annotations

import argparse
import time

from rich.console import Console
from rich.table import Table

from gui_envs.verifiers import run_label_functions
from gui_envs.verifiers.api import view_from_records
from gui_envs.verifiers.synth import label_function

TARGET_S = 1.0


def trajectory(steps: int, seed: int):  # type: ignore[no-untyped-def]
    """A synthetic shop episode: clicks on named elements, one search typed, an item reaching the wishlist."""
    elements = [{"id": str(i), "text": f"Item {i}", "tag": "a", "bbox": [0, 20 * i, 100, 20 * i + 18], "clickable": True} for i in range(30)]
    actions = [{"type": "click", "element_id": str((seed + i) % 30)} for i in range(steps - 1)] + [{"type": "type", "text": "Item query"}]
    records = [{"facts": {"shop.wishlist": [f"Item {seed % 30}"] if i > steps // 2 else []}, "elements": elements, "location": f"http://shop.guigym.test/p/{i}"} for i in range(steps + 1)]
    return view_from_records("benchmark", actions, records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trajectories", type=int, default=64)
    parser.add_argument("--functions", type=int, default=10)
    parser.add_argument("--steps", type=int, default=12)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="8 trajectories, 1 repeat (guigym bench)")
    args = parser.parse_args()
    if args.quick:
        args.trajectories, args.repeats = 8, 1
    calls = [
        "validate_click_action(trajectory, 'Item {i}')",
        "validate_item_in_wishlist(trajectory, 'Item {i}')",
        "validate_type_action(trajectory, 'query', target_text_field='Item {i}')",
        "validate_url_visited(trajectory, 'shop.guigym.test/p/{i}')",
    ]
    codes = [label_function(calls[i % len(calls)].format(i=i)) for i in range(args.functions)]
    trajs = [trajectory(args.steps, seed) for seed in range(args.trajectories)]
    run_label_functions(codes[:1], trajs[:1])  # starts the worker
    times = []
    for _ in range(args.repeats):
        start = time.perf_counter()
        out = run_label_functions(codes, trajs)
        times.append(time.perf_counter() - start)
    passed = sum(bool(v.passed) for row in out for v in row)
    table = Table(title="label-function sandbox: one batch")
    for col in ("trajectories", "functions", "verdicts", "passed", "best s", "median s", "per verdict ms", "target s"):
        table.add_column(col)
    best, median = min(times), sorted(times)[len(times) // 2]
    n = args.trajectories * args.functions
    table.add_row(str(args.trajectories), str(args.functions), str(n), str(passed), f"{best:.3f}", f"{median:.3f}", f"{1000 * median / n:.2f}", f"< {TARGET_S:g}")
    Console().print(table)


if __name__ == "__main__":
    main()
