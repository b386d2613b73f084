"""``python -m trainers.trl --config configs/trl/<run>.yaml [--set KEY=VALUE ...]``, as ``guigym train trl``."""

from trainers.trl.train import main

main()
