"""The command-line layer of guigym (``guigym envs``, ``guigym run``, the demo).

It sits on top of the four packages (``rewards`` <- ``gui_envs`` <- ``agents`` <- ``trainers``) and only
wires them together; nothing below imports it.
"""
