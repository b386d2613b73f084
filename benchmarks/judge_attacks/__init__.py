"""Attacks on the web and phone judges, played without a browser: the blind policies
(:mod:`~benchmarks.judge_attacks.blind_policies`) and the side-effect sweep
(:mod:`~benchmarks.judge_attacks.blind_sweep`).

``benchmarks/judge_audit.py`` prints their success beside chance; the adversarial judge tests assert it. They sit
in a folder of their own because every ``benchmarks/*.py`` is a script that ``guigym bench`` runs.
"""
