"""Architecture configs of the hub models guigym's real-size configs name, bundled for offline use.

Nothing can be downloaded on the machines guigym is tested on, yet a memory plan or a GPU check of a 3B config
needs the 3B architecture. :func:`hub_config` gives it: the model's ``config.json`` from the hub cache or a local
folder when there is one, else the bundled copy of its architecture fields. Weights are never bundled; a model
built from these configs has random weights.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

#: Hub id -> bundled config file in this folder.
BUNDLED = {
    "Qwen/Qwen2.5-VL-3B-Instruct": "qwen2_5_vl_3b_instruct.json",
}


def hub_config(model: str) -> Any:
    """The ``transformers`` config of ``model`` (a local folder or hub id), without downloading.

    Tries ``AutoConfig.from_pretrained(model, local_files_only=True)`` (a local folder, or the hub cache), then
    the bundled copy in :data:`BUNDLED`. Raises ``ValueError`` naming the model and the bundled ids when neither
    has it.
    """
    from transformers import AutoConfig

    try:
        return AutoConfig.from_pretrained(model, local_files_only=True)
    except (OSError, ValueError):
        pass
    name = BUNDLED.get(model)
    if name is None:
        raise ValueError(
            f"no config for {model!r}: it is neither a local folder nor in the hub cache, and guigym bundles only "
            f"{sorted(BUNDLED)}; download it once (huggingface-cli download {model} config.json) or pass a folder"
        )
    values = json.loads((Path(__file__).parent / name).read_text())
    values = {k: v for k, v in values.items() if not k.startswith("_")}
    model_type = values.pop("model_type")
    return AutoConfig.for_model(model_type, **values)
