"""Task templates for the bundled sites. Importing this package registers every template in :data:`TASKS`."""

from gui_envs.browser.site import Site
from gui_envs.tasks.judging import answers_match
from gui_envs.web.sites.classifieds import ClassifiedsSite
from gui_envs.web.sites.forum import ForumSite
from gui_envs.web.sites.shop import ShopSite
from gui_envs.web.tasks import classifieds, forum, shop  # noqa: F401  (registers the templates)
from gui_envs.web.tasks.base import TASKS, AnswerTask, InfeasibleTask, StateTask, WebTask

#: The bundled sites by host name.
SITES: dict[str, Site] = {"shop": ShopSite(), "forum": ForumSite(), "classifieds": ClassifiedsSite()}
SITE_NAMES: tuple[str, ...] = tuple(SITES)

__all__ = [
    "SITES",
    "SITE_NAMES",
    "TASKS",
    "AnswerTask",
    "InfeasibleTask",
    "StateTask",
    "WebTask",
    "answers_match",
]
