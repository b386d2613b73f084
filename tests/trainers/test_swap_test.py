"""The swap test: the demonstrator follows every rewritten instruction; a policy that ignores the words keeps its
answer and scores its chance."""

from __future__ import annotations

import gymnasium as gym
import pytest

import gui_envs  # noqa: F401
from agents.base import AgentOutput, BaseAgent
from agents.episode import ListWorkers
from agents.miniwob_demonstrator import MiniWoBDemonstrator, first_action
from agents.prompts.act import ActFormat, listed_elements
from gui_envs.browser.observation import parse_elements
from gui_envs.schema.actions import Action
from trainers.swap_test import same_target, swap_test

SEEDS = list(range(950_000, 950_020))  # two of each task of the suite; no benchmark uses these


class FirstListed(BaseAgent):
    """Clicks the first listed element whatever the instruction says."""

    def act(self, observation):
        return AgentOutput(Action.click_element(str(listed_elements(observation)[0]["id"])))


class FollowsThroughTheListing(BaseAgent):
    """The demonstrator's first action, answered as a text agent would: its letter in the ``act`` listing, read
    back (a tab's inner link becomes the listed tab)."""

    def act(self, observation):
        fmt = ActFormat()
        wanted = first_action(observation["instruction"], parse_elements(observation["elements"]))
        return AgentOutput(fmt.parse(fmt.answer_text(wanted, observation), observation)[0])


@pytest.fixture(scope="module")
def workers():
    w = ListWorkers([gym.make("GuiWeb-MiniWoB-Suite-v0", screenshots=False, reload_page=False) for _ in range(2)])
    yield w
    w.close()


def test_the_demonstrator_follows_every_swap_and_a_blind_policy_keeps_its_answer(workers):
    followed, count = swap_test(workers, MiniWoBDemonstrator(), SEEDS)["eval_swap_rate"]
    assert count >= 15 and followed == count  # pages with one button label or one link have no swap
    blind = swap_test(workers, FirstListed(), SEEDS)
    kept, n = blind["eval_swap_kept"]
    chance, _ = blind["eval_swap_chance"]
    assert kept == n == count
    assert blind["eval_swap_rate"][0] / n < 0.5 and 0 < chance / n < 1


def test_a_text_agent_that_follows_scores_every_swap(workers):
    followed, count = swap_test(workers, FollowsThroughTheListing(), SEEDS)["eval_swap_rate"]
    assert count >= 15 and followed == count


def test_an_element_and_its_same_text_inner_element_are_one_target():
    tab, link = {"id": "4", "text": "Tab #2", "bbox": [0, 0, 50, 20]}, {"id": "5", "text": "Tab #2", "bbox": [5, 2, 45, 18]}
    other = {"id": "6", "text": "Tab #3", "bbox": [60, 0, 110, 20]}
    panel = {"id": "1", "text": "Tab #2 Tab #3", "bbox": [0, 0, 200, 100]}  # holds both, another text
    elements = [panel, tab, link, other]
    assert same_target(Action.click_element("4"), Action.click_element("5"), elements)
    assert same_target(Action.click(25, 10), Action.click_element("4"), elements)
    assert not same_target(Action.click_element("6"), Action.click_element("5"), elements)
    assert not same_target(Action.click_element("1"), Action.click_element("5"), elements)


def test_same_target_compares_element_type_and_text():
    elements = [{"id": "1", "bbox": [0, 0, 10, 10]}, {"id": "2", "bbox": [20, 0, 30, 10]}]
    assert same_target(Action.click(5, 5), Action.click_element("1"), elements)
    assert not same_target(Action.click_element("2"), Action.click_element("1"), elements)
    assert not same_target(Action.type_text("a", element_id="1"), Action.type_text("b", element_id="1"), elements)
    assert not same_target(None, Action.click_element("1"), elements)
