"""``python -m trainers.trl --config configs/trl/<run>.yaml [section.field=value ...]``."""

from trainers.trl.train import main

main()
