"""MobileIPL (seed 003): leaf values, value back-propagation, tree classes, T-DPO pair filter."""

import pytest

from rewards.ipl import (
    TreeNode,
    backpropagate,
    classify_tree,
    leaf_value,
    node_action_type,
    preference_pairs,
)
from rewards.steps import StepPrediction, StepTarget

SCREEN = (1000, 1000)


def test_click_leaf_values():
    t = StepTarget("click", point=(500.0, 500.0), box=(480, 480, 520, 520))
    far = StepPrediction("click", point=(500.0, 900.0))  # d = 400 / 1000 = 0.4
    # range form: v = v_type + v_format + (1 - v_type - v_format)(1 - d) = 0.1 + 0.1 + 0.8 * 0.6 = 0.68
    assert leaf_value(far, t, SCREEN) == pytest.approx(0.68)
    # printed form: v = v_type + v_format + (1 - d) - (v_type + v_format) d = 0.2 + 0.6 - 0.08 = 0.72
    assert leaf_value(far, t, SCREEN, click_form="printed") == pytest.approx(0.72)
    # printed form exceeds 1 near the target: d = 0.06 -> 1.2 * 0.94 = 1.128
    near = StepPrediction("click", point=(500.0, 560.0))
    assert leaf_value(near, t, SCREEN, click_form="printed") == pytest.approx(1.128)
    assert leaf_value(near, t, SCREEN) == pytest.approx(0.2 + 0.8 * 0.94)  # 0.952
    # inside the box, or within 0.05 of the point: exact match
    assert leaf_value(StepPrediction("click", point=(519.0, 481.0)), t, SCREEN) == 1.0
    assert leaf_value(StepPrediction("click", point=(540.0, 500.0)), t, SCREEN) == 1.0  # d = 0.04
    # d clipped to 1: v = 0.2 (the floor of the range)
    assert leaf_value(StepPrediction("click", point=(-5000.0, 0.0)), t, SCREEN) == pytest.approx(0.2)
    # type matches but no coordinates: v_type only; wrong type: 0; unparsed: 0
    assert leaf_value(StepPrediction("click"), t, SCREEN) == pytest.approx(0.1)
    assert leaf_value(StepPrediction("long_press", point=(500.0, 500.0)), t, SCREEN) == 0.0
    assert leaf_value(None, t, SCREEN) == 0.0


def test_click_distance_normalised_per_axis():
    # portrait screen 1080 x 2400: dx = 216 px -> 216 / 1080 = 0.2 -> v = 0.2 + 0.8 * 0.8 = 0.84
    t = StepTarget("click", point=(540.0, 1200.0))
    assert leaf_value(StepPrediction("click", point=(756.0, 1200.0)), t, (1080, 2400)) == pytest.approx(0.84)
    # diagonal normalisation: 216 / sqrt(1080^2 + 2400^2) = 216 / 2631.8 = 0.08207 -> 0.2 + 0.8 * 0.91793
    v = leaf_value(StepPrediction("click", point=(756.0, 1200.0)), t, (1080, 2400), distance_mode="diagonal")
    assert v == pytest.approx(0.2 + 0.8 * (1 - 216 / (1080**2 + 2400**2) ** 0.5))


def test_input_and_other_leaf_values():
    t = StepTarget("type", text="turn on wifi")
    # tokens [turn, wifi, off] vs [turn, on, wifi]: overlap 2, P = R = 2/3, F1 = 2/3
    # v = 0.1 + 0.1 + 0.8 * 2/3 = 0.733333
    assert leaf_value(StepPrediction("type", text="turn wifi off"), t, SCREEN) == pytest.approx(
        0.2 + 0.8 * 2 / 3
    )
    assert leaf_value(StepPrediction("type", text="  turn on   wifi"), t, SCREEN) == 1.0
    assert leaf_value(StepPrediction("type", text="xyz"), t, SCREEN) == pytest.approx(0.2)  # F1 = 0
    s = StepTarget("scroll", args={"direction": "down"})
    assert leaf_value(StepPrediction("scroll", args={"direction": "down"}), s, SCREEN) == 1.0
    assert leaf_value(StepPrediction("scroll", args={"direction": "up"}), s, SCREEN) == pytest.approx(0.1)
    # custom v_type / v_format: 0.05 + 0.15 + 0.8 * 2/3
    v = leaf_value(StepPrediction("type", text="turn wifi off"), t, SCREEN, v_type=0.05, v_format=0.15)
    assert v == pytest.approx(0.2 + 0.8 * 2 / 3)


def leaves(*values):
    return [TreeNode(f"leaf{v}", v) for v in values]


def build_tree():
    """Depth-3 tree, branching 3 (27 leaves); node names A..C, A1..C3."""
    spec = {
        "A": {"A1": (1, 1, 1), "A2": (1, 0, 0.5), "A3": (0.2, 0.2, 0.2)},
        "B": {"B1": (0, 0, 0), "B2": (0.68, 0.2, 0.2), "B3": (1, 1, 0.1)},
        "C": {"C1": (1, 1, 1), "C2": (1, 1, 1), "C3": (0.1, 0.1, 1)},
    }
    nodes = {}
    root = TreeNode("root")
    for name, kids in spec.items():
        node = TreeNode(name)
        for kid, vals in kids.items():
            nodes[kid] = TreeNode(kid, children=leaves(*vals))
            node.children.append(nodes[kid])
        nodes[name] = node
        root.children.append(node)
    return root, nodes


def test_backprop_3x3x3_by_hand():
    root, n = build_tree()
    # level 2: A1 = 1, A2 = 1.5/3 = 0.5, A3 = 0.2; B1 = 0, B2 = 1.08/3 = 0.36, B3 = 2.1/3 = 0.7;
    #          C1 = C2 = 1, C3 = 1.2/3 = 0.4
    # level 1: A = 1.7/3 = 0.566667, B = 1.06/3 = 0.353333, C = 2.4/3 = 0.8
    # root = (0.566667 + 0.353333 + 0.8) / 3 = 1.72 / 3 = 0.573333
    assert backpropagate(root) == pytest.approx(1.72 / 3)
    expected = {"A1": 1, "A2": 0.5, "A3": 0.2, "B1": 0, "B2": 0.36, "B3": 0.7, "C1": 1, "C2": 1, "C3": 0.4}
    expected |= {"A": 1.7 / 3, "B": 1.06 / 3, "C": 0.8}
    for name, v in expected.items():
        assert n[name].value == pytest.approx(v), name


def test_backprop_with_discount():
    root, n = build_tree()
    # c = 0.9: A2 = 0.45; A = 0.9 * (0.9 + 0.45 + 0.18) / 3 = 0.459; B = 0.9 * (0 + 0.324 + 0.63) / 3 = 0.2862
    # C = 0.9 * (0.9 + 0.9 + 0.36) / 3 = 0.648; root = 0.9 * (0.459 + 0.2862 + 0.648) / 3 = 0.41796
    assert backpropagate(root, discount=0.9) == pytest.approx(0.41796)
    assert n["A2"].value == pytest.approx(0.45)
    assert n["B"].value == pytest.approx(0.2862)


def test_classification():
    root, _ = build_tree()
    assert classify_tree(root) == "beta"
    assert classify_tree(TreeNode(children=leaves(1.0, 1.0))) == "alpha"
    assert classify_tree(TreeNode(children=leaves(0.99, 0.0))) == "gamma"


def test_pair_filter_on_3x3x3_tree():
    root, _ = build_tree()
    pairs = preference_pairs(root)
    got = [(p.chosen, p.rejected) for p in pairs]
    # Positives are value-1 nodes with a sibling lower by more than 1/3 (chosen value 1 - rejected > 1/3):
    # root: A .567, B .353, C .8 -> no value-1 child, no pair (the old any-gap rule paired C over B).
    # A: A1 = 1 over A2 .5 and A3 .2.   B: B3 = .7 is not 1 -> none.   C: C1, C2 = 1 over C3 .4.
    # leaves: A2 [1, 0, .5] -> 1 over 0 and .5; B2 [.68, .2, .2] -> none; B3 [1, 1, .1] -> both 1s over .1;
    # C3 [.1, .1, 1] -> 1 over both .1s; A1, C1, C2 are all 1 -> none.  Total 2 + 2 + 2 + 2 + 2 = 10
    assert len(pairs) == 10
    assert {("A1", "A2"), ("A1", "A3"), ("C1", "C3"), ("C2", "C3")} <= set(got)
    assert ("C", "B") not in got and ("B3", "B2") not in got
    assert all(p.kind == "beta" and p.chosen_value == 1.0 and 1.0 - p.rejected_value > 1 / 3 for p in pairs)
    c_pair = next(p for p in pairs if (p.chosen, p.rejected) == ("C2", "C3"))
    assert c_pair.prefix == ("root", "C")
    # a stricter threshold (0.55) drops A1-A2 (gap 0.5) and keeps A1-A3 (0.8)
    strict = {(p.chosen, p.rejected) for p in preference_pairs(root, threshold=0.55)}
    assert ("A1", "A2") not in strict and ("A1", "A3") in strict


def test_beta_positives_are_value_one_and_type_diverse():
    # A hand-built beta tree whose decision turn branches four ways: two value-1 clicks, one value-1 press,
    # one wrong scroll (value 0). K = 4, gap 1/4: every value-1 child pairs with the scroll.
    def act(name, kind, value):
        return TreeNode({"text": name, "action_type": kind}, value)

    root = TreeNode("s", children=[act("click OK", "click", 1.0), act("tap OK", "click", 1.0),
                                   act("press Enter", "press", 1.0), act("scroll up", "scroll", 0.0)])  # fmt: skip
    every = preference_pairs(root)
    assert [p.chosen["text"] for p in every] == ["click OK", "tap OK", "press Enter"]
    assert {p.rejected["text"] for p in every} == {"scroll up"}
    # two positives: the two types (click, press) beat a second click, though "tap OK" comes first
    two = preference_pairs(root, max_positives=2)
    assert [p.chosen["text"] for p in two] == ["click OK", "press Enter"]
    assert all(p.chosen_value == 1.0 and p.rejected_value == 0.0 for p in two)
    # a continuation's type is that of its value-1 leaves when the node itself has none
    inner = TreeNode("thought", children=[act("press Back", "press", 1.0)])
    assert node_action_type(inner) == "press"


def test_alpha_and_gamma_pairs():
    assert preference_pairs(TreeNode(children=leaves(1.0, 1.0, 1.0))) == []
    gamma = TreeNode(
        "s", children=[TreeNode("t1", children=leaves(0.2, 0.5)), TreeNode("t2", children=leaves(0.1))]
    )
    pairs = preference_pairs(gamma, ground_truth="a*")
    assert [(p.chosen, p.rejected, p.prefix) for p in pairs] == [
        ("a*", "leaf0.2", ("s", "t1")),
        ("a*", "leaf0.5", ("s", "t1")),
        ("a*", "leaf0.1", ("s", "t2")),
    ]
    with pytest.raises(ValueError, match="ground_truth"):
        preference_pairs(gamma)
    with pytest.raises(ValueError, match="no value"):
        backpropagate(TreeNode(children=[TreeNode("x")]))
