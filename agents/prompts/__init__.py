"""Prompt templates: GUI-R1 one-shot, MobileIPL CoaT four turns, and a plain text-answer template."""

from agents.prompts.coat import TURNS, coat_user_turn
from agents.prompts.formats import GuiR1Format, OutputFormat, PromptContext, TextAnswerFormat, auto_format
from agents.prompts.gui_r1 import ACTION_VOCABULARIES, gui_r1_messages, gui_r1_prompt, vocabulary
from agents.prompts.observation import render_elements, render_history, render_observation_text

__all__ = [
    "ACTION_VOCABULARIES",
    "TURNS",
    "GuiR1Format",
    "OutputFormat",
    "PromptContext",
    "TextAnswerFormat",
    "auto_format",
    "coat_user_turn",
    "gui_r1_messages",
    "gui_r1_prompt",
    "render_elements",
    "render_history",
    "render_observation_text",
    "vocabulary",
]
