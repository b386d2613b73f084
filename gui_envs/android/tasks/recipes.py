"""Recipes tasks: search, favourites, reading details, and recipes that are not in the book."""

from __future__ import annotations

from gui_envs.android.apps.recipes import RECIPE_POOL, Recipes, draw_details
from gui_envs.android.tasks.base import (
    AnswerTask,
    MaybeMissing,
    PlanStep,
    StateTask,
    open_app,
    search_in,
    search_then_give_up,
    stop,
    tap,
)

RECIPES = Recipes.package


def _find_recipe(name: str) -> list[PlanStep]:
    return [*search_in("Recipes", name), tap(name, rid="recipe_row", contains=True)]


class FavouriteRecipe(MaybeMissing, StateTask):
    """Feasible on about half the seeds: on the others the recipe is not in the book (issue 36)."""

    name = "recipes.add_favourite"
    app = RECIPES

    def setup(self) -> str:
        pool = self.alternatives()
        self.rid, self.recipe = self.pick([r for r in self.rows("SELECT id, name FROM recipes ORDER BY id") if r[1] in pool])
        self.missing = self.recipe
        self.execute("UPDATE recipes SET favourite = 0 WHERE id = ?", (self.rid,))
        if self.keep_or_drop("recipes", self.rid):
            self.may_edit("recipes", self.rid, "favourite")
        return f"Add '{self.recipe}' to your favourite recipes."

    def alternatives(self) -> list[str]:
        # The app's search matches inside names and cuisines: a name another recipe's name or cuisine holds would
        # never come back empty, so it is not drawn.
        rows = self.rows("SELECT id, name, cuisine FROM recipes")
        return [n for i, n, _ in rows if not any(n.lower() in f"{m} {c}".lower() for j, m, c in rows if j != i)]

    def done(self) -> bool:
        return self.state.one(RECIPES, "SELECT favourite FROM recipes WHERE id = ?", (self.rid,)) == (1,)

    def oracle_plan(self) -> list[PlanStep]:
        if not self.feasible:
            return search_then_give_up("Recipes", self.recipe)
        return _find_recipe(self.recipe) + [tap("Add to favourites")]


class UnfavouriteRecipe(StateTask):
    name = "recipes.remove_favourite"
    app = RECIPES

    def setup(self) -> str:
        self.rid, self.recipe = self.pick(self.rows("SELECT id, name FROM recipes ORDER BY id"))
        self.execute("UPDATE recipes SET favourite = 1 WHERE id = ?", (self.rid,))
        self.may_edit("recipes", self.rid, "favourite")
        return f"Remove '{self.recipe}' from your favourite recipes."

    def done(self) -> bool:
        return self.state.one(RECIPES, "SELECT favourite FROM recipes WHERE id = ?", (self.rid,)) == (0,)

    def oracle_plan(self) -> list[PlanStep]:
        return [
            open_app("Recipes"),
            tap("Favourites", rid="tab_favourites"),
            tap(self.recipe, rid="recipe_row", contains=True),
            tap("Remove from favourites"),
        ]


class _RecipeFact(AnswerTask):
    app = RECIPES
    column = ""
    question = ""
    unit = ""

    def setup(self) -> str:
        self.recipe, self.reference_answer = self.pick_by_answer(self._facts(), lambda r: r[1])
        return self.question.format(recipe=self.recipe)

    def _facts(self) -> list[tuple[str, str]]:
        rows = self.rows(f"SELECT name, {self.column} FROM recipes ORDER BY id")
        return [(name, f"{value} {self.unit}".strip()) for name, value in rows]

    def candidates(self) -> list[str]:
        return list(dict.fromkeys(answer for _, answer in self._facts()))

    def oracle_plan(self) -> list[PlanStep]:
        return _find_recipe(self.recipe) + [stop(answer=self.reference_answer)]


class RecipeTime(_RecipeFact):
    name = "recipes.cooking_time"
    column, unit = "minutes", "minutes"
    question = "How many minutes does '{recipe}' take to make?"


class RecipeServings(_RecipeFact):
    name = "recipes.servings"
    column, unit = "servings", "servings"
    question = "How many servings does the '{recipe}' recipe make?"


class RecipeCalories(_RecipeFact):
    name = "recipes.calories"
    column, unit = "calories", "kcal"
    question = "How many calories are in '{recipe}'?"


class CountCuisine(AnswerTask):
    name = "recipes.count_cuisine"
    app = RECIPES

    def setup(self) -> str:
        # The count is drawn uniformly over the candidates and the book changed to hold it (recipes of the
        # cuisine removed or added from the pool): the seeded book alone makes "2" right on half the seeds.
        self.cuisine = self.pick(sorted({cuisine for _, cuisine in RECIPE_POOL}))
        want = int(self.rng.integers(len(self._findable()) + 1))
        found = [
            rid
            for rid, name, cuisine in self.rows("SELECT id, name, cuisine FROM recipes ORDER BY id")
            if self._finds(name, cuisine)
        ]
        for i in self.rng.permutation(len(found))[: max(len(found) - want, 0)]:
            self.execute("DELETE FROM recipes WHERE id = ?", (found[int(i)],))
        present = {name for (name,) in self.rows("SELECT name FROM recipes")}
        absent = [(n, c) for n, c in self._findable() if n not in present]
        for i in self.rng.permutation(len(absent))[: max(want - len(found), 0)]:
            self.execute(
                "INSERT INTO recipes (name, cuisine, minutes, servings, calories, favourite) VALUES (?, ?, ?, ?, ?, ?)",
                (*absent[int(i)], *draw_details(self.rng)),
            )
        self.reference_answer = str(want)
        return f"How many recipes does a search for '{self.cuisine}' find in Recipes? Answer with a number."

    def _finds(self, name: str, cuisine: str) -> bool:
        """Whether the app's search for the cuisine lists this recipe (it matches name or cuisine)."""
        q = self.cuisine.lower()
        return q in name.lower() or q in cuisine.lower()

    def _findable(self) -> list[tuple[str, str]]:
        return [(n, c) for n, c in RECIPE_POOL if self._finds(n, c)]

    def candidates(self) -> list[str]:
        # Every count the search could show: the book draws its recipes from RECIPE_POOL, so no more than the
        # pool's recipes of this cuisine.
        return [str(k) for k in range(len(self._findable()) + 1)]

    def oracle_plan(self) -> list[PlanStep]:
        return [*search_in("Recipes", self.cuisine), stop(answer=self.reference_answer)]
