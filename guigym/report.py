"""``guigym report RUN_DIR``: one self-contained HTML page for a run folder, plus a GIF per episode.

The page embeds every image as a data URI, so it can be mailed or attached as one file. It shows, for each
trajectory folder found under ``RUN_DIR`` (any folder holding ``trajectory.jsonl``): the instruction, the
verdict and return, the episode GIF (:mod:`guigym.episode_gif`), and per step the screenshot with a red
marker where the action pointed, the model's text, the action, the reward and the step's verdict. Strategy
graphs (``*graph*.json`` files of :class:`gui_envs.verifiers.graph.StrategyGraph`) are drawn, and training logs
(``metrics.jsonl`` of the GRPO / SFT trainers) are plotted as curves. A caller such as ``guigym demo`` can add
its own tables and figures at the top, and leave sub-folders (scratch work) out.

The GIFs are also written as files, ``RUN_DIR/report_gifs/<trajectory id>.gif``.
"""

from __future__ import annotations

import base64
import html
import io
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gui_envs.schema.trajectory import TRAJECTORY_FILE, Trajectory, TrajectoryFormatError
from guigym.episode_gif import MARKER_PX, point_of, trajectory_to_gif

#: Screenshots wider or taller than this (pixels) are scaled down in the page.
THUMB_PX = 480

_CSS = """
body { font-family: system-ui, sans-serif; margin: 24px; color: #222; }
h1 { margin-bottom: 4px; } h2 { margin-top: 32px; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 8px 0; } td, th { border: 1px solid #ddd; padding: 4px 8px;
vertical-align: top; font-size: 13px; } th { background: #f4f4f4; }
pre { white-space: pre-wrap; max-width: 520px; margin: 0; font-size: 12px; }
.ok { color: #177a2a; font-weight: bold; } .bad { color: #b3261e; font-weight: bold; }
img { border: 1px solid #ccc; }
"""


class ReportError(ValueError):
    """The run folder cannot be reported on (missing, or holds nothing guigym wrote)."""


def _data_uri(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def _png_uri(image: Any, max_width: int = THUMB_PX) -> str:
    """A PIL image (or an (H, W, 3) uint8 array) scaled to fit ``max_width`` x ``max_width`` pixels, as a PNG
    data URI."""
    from PIL import Image

    if isinstance(image, np.ndarray):
        image = Image.fromarray(np.asarray(image, dtype=np.uint8))
    # Bound both sides, so a 360 x 800 phone screen stays as short as a web one.
    scale = min(1.0, max_width / image.width, max_width / image.height)
    if scale < 1.0:
        image = image.resize((max(1, round(image.width * scale)), max(1, round(image.height * scale))))
    buf = io.BytesIO()
    image.save(buf, format="PNG", optimize=True)
    return _data_uri(buf.getvalue(), "image/png")


def _marked(step: Any) -> Any:
    """The step's screenshot with a red ring where its action pointed (pixels), as a PIL image."""
    from PIL import Image, ImageDraw

    image = Image.fromarray(np.asarray(step.screenshot, dtype=np.uint8))
    point = point_of(step)
    if point is not None:
        x, y, r = point[0], point[1], MARKER_PX
        ImageDraw.Draw(image).ellipse((x - r, y - r, x + r, y + r), outline=(230, 30, 30), width=3)
    return image


def _verdict(success: bool | None) -> str:
    if success is None:
        return "-"
    return '<span class="ok">success</span>' if success else '<span class="bad">failure</span>'


def _episode_html(traj: Trajectory, folder: Path, gif_dir: Path) -> str:
    e = html.escape
    parts = [
        f"<h2>{e(traj.env_id or '?')} &middot; {e(traj.task or '')} &middot; seed {traj.seed} &middot; {e(traj.id)}</h2>",
        f"<p><b>Instruction:</b> {e(traj.instruction)}</p>",
        f"<p><b>Verdict:</b> {_verdict(traj.success)} &middot; score {traj.score if traj.score is not None else '-'}"
        f" &middot; return {traj.total_reward:+.3f} &middot; {len(traj.steps)} steps"
        f" &middot; agent {e(str(traj.metadata.get('agent', '-')))}</p>",
    ]
    try:
        gif = trajectory_to_gif(folder, gif_dir / f"{traj.id}.gif")
        parts.append(f'<p><img class="gif" alt="episode GIF" src="{_data_uri(gif.read_bytes(), "image/gif")}"></p>')
    except ValueError:
        parts.append("<p>(no screenshots recorded: run with <code>--record</code> on an env that renders)</p>")
    rows = ["<tr><th>step</th><th>screen (red ring: the click)</th><th>model text</th><th>action</th>"
            "<th>reward</th><th>step verdict</th></tr>"]
    for index, step in enumerate(traj.steps):
        shot = f'<img alt="step {index}" src="{_png_uri(_marked(step))}">' if step.screenshot is not None else "-"
        action = step.action.to_json() if step.action is not None else "(unparsed)"
        error = f"<br><span class='bad'>{e(step.action_error)}</span>" if step.action_error else ""
        verdict = _verdict(step.info.get("success")) if (step.terminated or step.truncated) else "-"
        rows.append(
            f"<tr><td>{index}</td><td>{shot}</td><td><pre>{e(step.output_text or '')}</pre></td>"
            f"<td><pre>{e(action)}</pre>{error}</td><td>{step.reward:+.3f}</td><td>{verdict}</td></tr>"
        )
    if traj.final_screenshot is not None:
        rows.append(f'<tr><td>end</td><td><img alt="final screen" src="{_png_uri(traj.final_screenshot)}"></td>'
                    f"<td colspan=4>the screen after the last action</td></tr>")
    parts.append("<table>" + "".join(rows) + "</table>")
    return "\n".join(parts)


def _found(run_dir: Path, pattern: str, skip: Sequence[str]) -> list[Path]:
    """Files under ``run_dir`` matching ``pattern``, except those under the top-level folders named in ``skip``."""
    return sorted(p for p in run_dir.rglob(pattern) if p.relative_to(run_dir).parts[0] not in skip)


def _extras_html(tables: Mapping[str, tuple[Sequence[str], Sequence[Sequence[Any]]]], figures: Mapping[str, Path]) -> str:
    e = html.escape
    parts = []
    for title, (columns, rows) in tables.items():
        head = "".join(f"<th>{e(str(c))}</th>" for c in columns)
        body = "".join("<tr>" + "".join(f"<td>{e(str(v))}</td>" for v in row) + "</tr>" for row in rows)
        parts.append(f"<h2>{e(title)}</h2><table><tr>{head}</tr>{body}</table>")
    for caption, png in figures.items():
        parts.append(f"<h2>{e(caption)}</h2>"
                     f'<img alt="{e(caption)}" src="{_data_uri(Path(png).read_bytes(), "image/png")}">')
    return "\n".join(parts)


def _graphs_html(run_dir: Path, scratch: Path, skip: Sequence[str] = ()) -> str:
    from gui_envs.verifiers.graph import StrategyGraph

    parts = []
    for path in _found(run_dir, "*graph*.json", skip):
        try:
            graph = StrategyGraph.load(path)
            png = graph.draw(scratch / f"graph_{len(parts)}.png")
        except (ValueError, KeyError, TypeError, json.JSONDecodeError, ImportError):
            continue  # not a strategy graph, or no matplotlib: nothing to draw
        parts.append(f"<h3>{html.escape(str(path.relative_to(run_dir)))}</h3>"
                     f'<img alt="strategy graph" src="{_data_uri(png.read_bytes(), "image/png")}">')
    return "<h2>Strategy graphs</h2>" + "".join(parts) if parts else ""


def _curves_html(run_dir: Path, scratch: Path, skip: Sequence[str] = ()) -> str:
    from trainers.run_log import plot_curve, read_log

    parts = []
    for log in _found(run_dir, "metrics.jsonl", skip):
        records = read_log(log)
        keys = [k for k in ("reward_mean", "success_rate", "loss") if any(k in r for r in records)]
        if not keys:
            continue  # empty, or a log of other quantities (CORE's per-iteration table)
        try:
            png = plot_curve(log, scratch / f"curve_{len(parts)}.png", keys=keys)
        except ImportError:
            continue
        parts.append(f"<h3>{html.escape(str(log.relative_to(run_dir)))}</h3>"
                     f'<img alt="training curve" src="{_data_uri(png.read_bytes(), "image/png")}">')
    return "<h2>Training curves</h2>" + "".join(parts) if parts else ""


#: Agent names (``Trajectory.metadata["agent"]``) of scripted players that read the env's privileged state.
SCRIPTED_AGENTS = ("oracle", "noisy_oracle", "OracleAgent", "NoisyOracleAgent")


def episode_summary(trajectories: Sequence[Trajectory]) -> list[str]:
    """One line per agent that played ``trajectories``: how many episodes and their success rate, a scripted
    oracle's episodes labelled as demonstrations, so that a page of oracle recordings never reads as a learnt
    policy's success.

    >>> from gui_envs.schema.trajectory import Trajectory
    >>> t = Trajectory("open the note", metadata={"agent": "oracle"})
    >>> t.success = True
    >>> episode_summary([t, t])
    ['2 oracle demonstrations (oracle, scripted from privileged state; not a learning figure): success 100%']
    """
    by_agent: dict[str, list[Trajectory]] = {}
    for t in trajectories:
        by_agent.setdefault(str(t.metadata.get("agent", "unnamed agent")), []).append(t)
    lines = []
    for agent, group in by_agent.items():
        done = [t.success for t in group if t.success is not None]
        rate = f"{sum(done) / len(done):.0%}" if done else "-"
        n = len(group)
        if agent in SCRIPTED_AGENTS:
            noun = "oracle demonstration" if n == 1 else "oracle demonstrations"
            lines.append(f"{n} {noun} ({agent}, scripted from privileged state; not a learning figure): success {rate}")
        else:
            lines.append(f"{n} episode{'s' if n > 1 else ''} by {agent}: success {rate}")
    return lines


def write_report(
    run_dir: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    title: str = "guigym run report",
    tables: Mapping[str, tuple[Sequence[str], Sequence[Sequence[Any]]]] | None = None,
    figures: Mapping[str, str | os.PathLike[str]] | None = None,
    skip: Sequence[str] = (),
) -> Path:
    """Write the HTML report of ``run_dir`` (default ``RUN_DIR/report.html``) and return its path.

    Args:
        run_dir: the run folder; trajectories, strategy graphs and training logs are found anywhere below it.
        out: the page to write.
        title: the page's heading.
        tables: ``{title: (column names, rows)}``, shown first, cells as text.
        figures: ``{caption: PNG file}``, shown after the tables, embedded.
        skip: names of ``run_dir``'s sub-folders to leave out (scratch work, checkpoints).

    Raises:
        ReportError: ``run_dir`` does not exist, or holds nothing to show.
    """
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise ReportError(f"{run_dir} is not a folder; pass the folder given to `guigym run --record`")
    out_path = Path(out) if out is not None else run_dir / "report.html"
    gif_dir = run_dir / "report_gifs"
    episodes, skipped = [], []
    for marker in _found(run_dir, TRAJECTORY_FILE, skip):
        try:
            episodes.append((Trajectory.load(marker.parent, load_images=True), marker.parent))
        except TrajectoryFormatError as exc:
            skipped.append(f"{marker.parent}: {exc}")
    with tempfile.TemporaryDirectory() as tmp:
        graphs, curves = _graphs_html(run_dir, Path(tmp), skip), _curves_html(run_dir, Path(tmp), skip)
        extras = _extras_html(tables or {}, {k: Path(v) for k, v in (figures or {}).items()})
        if not episodes and not graphs and not curves and not extras:
            raise ReportError(
                f"{run_dir} holds no trajectory ({TRAJECTORY_FILE}), strategy graph or metrics.jsonl; "
                "record episodes with `guigym run ENV_ID --record DIR` first"
            )
        body = [f"<h1>{html.escape(title)}</h1><p>{html.escape(str(run_dir))}</p>"]
        body += [extras, curves, graphs]
        if episodes:
            body.append("<h2>Recorded episodes</h2>" + "".join(
                f"<p>{html.escape(line)}</p>" for line in episode_summary([t for t, _ in episodes])
            ))  # fmt: skip
        body += [_episode_html(t, f, gif_dir) for t, f in episodes]
        if skipped:
            body.append("<h2>Unreadable trajectories</h2><pre>" + html.escape("\n".join(skipped)) + "</pre>")
    page = (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>guigym report</title>"
        f"<style>{_CSS}</style></head><body>" + "\n".join(body) + "</body></html>"
    )
    out_path.parent.mkdir(parents=True, exist_ok=True)
    out_path.write_text(page, encoding="utf-8")
    return out_path


__all__ = ["SCRIPTED_AGENTS", "ReportError", "episode_summary", "write_report"]
