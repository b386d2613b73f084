"""Recipes tasks: search, favourites, reading details, and recipes that are not in the book."""

from __future__ import annotations

from gui_envs.android.apps.recipes import MISSING_RECIPES, Recipes
from gui_envs.android.tasks.base import (
    AnswerTask,
    InfeasibleTask,
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


class FavouriteRecipe(StateTask):
    name = "recipes.add_favourite"
    app = RECIPES

    def setup(self) -> str:
        self.rid, self.recipe = self.pick(self.rows("SELECT id, name FROM recipes ORDER BY id"))
        self.execute("UPDATE recipes SET favourite = 0 WHERE id = ?", (self.rid,))
        return f"Add '{self.recipe}' to your favourite recipes."

    def done(self) -> bool:
        return self.state.one(RECIPES, "SELECT favourite FROM recipes WHERE id = ?", (self.rid,)) == (1,)

    def oracle_plan(self) -> list[PlanStep]:
        return _find_recipe(self.recipe) + [tap("Add to favourites")]


class UnfavouriteRecipe(StateTask):
    name = "recipes.remove_favourite"
    app = RECIPES

    def setup(self) -> str:
        self.rid, self.recipe = self.pick(self.rows("SELECT id, name FROM recipes ORDER BY id"))
        self.execute("UPDATE recipes SET favourite = 1 WHERE id = ?", (self.rid,))
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
        self.recipe, value = self.pick(self.rows(f"SELECT name, {self.column} FROM recipes ORDER BY id"))
        self.reference_answer = f"{value} {self.unit}".strip()
        return self.question.format(recipe=self.recipe)

    def candidates(self) -> list[str]:
        return [f"{r[0]} {self.unit}".strip() for r in self.rows(f"SELECT DISTINCT {self.column} FROM recipes")]

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
        (self.cuisine,) = self.pick(self.rows("SELECT DISTINCT cuisine FROM recipes ORDER BY cuisine"))
        like = f"%{self.cuisine}%"
        (n,) = self.one("SELECT COUNT(*) FROM recipes WHERE name LIKE ? OR cuisine LIKE ?", (like, like)) or (
            0,
        )
        self.reference_answer = str(n)
        return f"How many recipes does a search for '{self.cuisine}' find in Recipes? Answer with a number."

    def candidates(self) -> list[str]:
        (n,) = self.one("SELECT COUNT(*) FROM recipes") or (0,)
        return [str(k) for k in range(n + 1)]

    def oracle_plan(self) -> list[PlanStep]:
        return [*search_in("Recipes", self.cuisine), stop(answer=self.reference_answer)]


class FavouriteRecipeFromSearch(InfeasibleTask):
    """CORE Fig. 7: the recipe does not exist; search, see "No results", then stop as infeasible."""

    name = "recipes.favourite_recipe"
    app = RECIPES

    def setup(self) -> str:
        self.missing = self.pick(MISSING_RECIPES)
        return f"Open the recipe for {self.missing} and add it to favourites."

    def oracle_plan(self) -> list[PlanStep]:
        return search_then_give_up("Recipes", self.missing)
