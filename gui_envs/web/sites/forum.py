"""Forum: a Reddit-like site with subforums, posts, comments, votes, subscriptions and user profiles.

The signed-in user is ``alex`` (:data:`ME`); only their own posts can be edited or deleted.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from gui_envs.browser.site import Request, Response, Router, html_escape, row_by_id
from gui_envs.web.sites.base import WebSite, button, form, text_input

ME = "alex"
USERS = ("alex", "bea_reads", "carlos_cooks", "dmitri", "emma_green", "farid", "gwen_lab", "hiro_trips")
SUBFORUMS: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {
    "books": (
        "Books and reading",
        ("Just finished", "Looking for", "Thoughts on", "Review:"),
        ("a mystery novel", "classic sci-fi", "a poetry collection", "a history book", "fantasy series"),
    ),
    "cooking": (
        "Recipes and kitchen tips",
        ("Best way to cook", "Help with", "My take on", "Tips for"),
        ("sourdough bread", "ramen broth", "roast vegetables", "lemon tart", "curry paste"),
    ),
    "gaming": (
        "Video and board games",
        ("Stuck on", "Recommend me", "Speedrun of", "Review:"),
        ("a puzzle game", "a strategy game", "an old RPG", "a co-op board game", "a racing game"),
    ),
    "gardening": (
        "Plants, soil and seeds",
        ("Yellow leaves on", "Growing", "Pruning", "Pests on"),
        ("tomatoes", "basil", "an apple tree", "roses", "chilli plants"),
    ),
    "science": (
        "Questions about science",
        ("Why does", "Explain", "New paper on", "Debate:"),
        ("the moon cause tides", "black holes", "CRISPR", "plate tectonics", "quantum dots"),
    ),
    "travel": (
        "Trips and tips",
        ("Itinerary for", "Budget trip to", "Hidden gems in", "Packing for"),
        ("Lisbon", "Kyoto", "Patagonia", "Iceland", "Marrakesh"),
    ),
}
SENTENCES = (
    "Any advice is welcome.",
    "I tried this twice already.",
    "Happy to share more details.",
    "What would you do?",
    "This surprised me a lot.",
    "Thanks in advance!",
)

router = Router()


class ForumSite(WebSite):
    host = "forum"
    title = "Guigym Forum"
    router = router
    nav = (("Forums", "/"), ("My profile", f"/user/{ME}"))
    schema = """
    CREATE TABLE users(name TEXT PRIMARY KEY, bio TEXT, karma INTEGER);
    CREATE TABLE subforums(name TEXT PRIMARY KEY, description TEXT);
    CREATE TABLE posts(id INTEGER PRIMARY KEY, subforum TEXT, author TEXT, title TEXT, body TEXT,
        score INTEGER, deleted INTEGER DEFAULT 0);
    CREATE TABLE comments(id INTEGER PRIMARY KEY, post_id INTEGER, author TEXT, body TEXT);
    CREATE TABLE votes(post_id INTEGER PRIMARY KEY, value INTEGER);
    CREATE TABLE subscriptions(subforum TEXT PRIMARY KEY);
    """

    def seed(self, db: sqlite3.Connection, rng: np.random.Generator) -> None:
        for user in USERS:
            db.execute(
                "INSERT INTO users VALUES (?,?,?)", (user, f"Hi, I am {user}.", int(rng.integers(1, 900)))
            )
        titles: set[str] = set()
        for sub, (desc, starts, topics) in SUBFORUMS.items():
            db.execute("INSERT INTO subforums VALUES (?,?)", (sub, desc))
            n = int(rng.integers(5, 8))
            while n:
                title = f"{rng.choice(starts)} {rng.choice(topics)}"
                if title in titles:
                    continue
                titles.add(title)
                n -= 1
                author = str(rng.choice(USERS))
                body = " ".join(rng.choice(SENTENCES, size=2, replace=False).tolist())
                cur = db.execute(
                    "INSERT INTO posts(subforum, author, title, body, score) VALUES (?,?,?,?,?)",
                    (sub, author, title, body, int(rng.integers(-3, 120))),
                )
                for _ in range(int(rng.integers(0, 5))):
                    db.execute(
                        "INSERT INTO comments(post_id, author, body) VALUES (?,?,?)",
                        (cur.lastrowid, str(rng.choice(USERS[1:])), str(rng.choice(SENTENCES))),
                    )


def post_row(db: sqlite3.Connection, pid: str | int) -> sqlite3.Row:
    return row_by_id(db, "posts", pid, "post", live_only=True)


def my_vote(db: sqlite3.Connection, pid: int) -> int:
    row = db.execute("SELECT value FROM votes WHERE post_id = ?", (pid,)).fetchone()
    return int(row[0]) if row else 0


def shown_score(db: sqlite3.Connection, p: sqlite3.Row) -> int:
    """The score a reader sees: the seeded score plus the signed-in user's vote."""
    return int(p["score"]) + my_vote(db, p["id"])


def _post_line(db: sqlite3.Connection, p: sqlite3.Row) -> str:
    n = db.execute("SELECT COUNT(*) FROM comments WHERE post_id=?", (p["id"],)).fetchone()[0]
    return (
        f"<div class='post'><a href='/post/{p['id']}'>{html_escape(p['title'])}</a><div class='muted'>"
        f"{shown_score(db, p)} points · by <a href='/user/{html_escape(p['author'])}'>{html_escape(p['author'])}</a> · "
        f"{n} comments</div></div>"
    )


@router.get("/")
def index(site: ForumSite, db: sqlite3.Connection, req: Request) -> Response:
    rows = db.execute(
        "SELECT s.*, (SELECT COUNT(*) FROM posts p WHERE p.subforum = s.name AND deleted = 0) AS n,"
        " (SELECT 1 FROM subscriptions x WHERE x.subforum = s.name) AS sub FROM subforums s ORDER BY name"
    ).fetchall()
    items = "".join(
        f"<div class='post'><a href='/f/{html_escape(s['name'])}'>f/{html_escape(s['name'])}</a> <span class='muted'>"
        f"{html_escape(s['description'])} · {s['n']} posts{' · subscribed' if s['sub'] else ''}</span></div>"
        for s in rows
    )
    return site.page("Forums", items)


@router.get("/f/<sub>")
def subforum(site: ForumSite, db: sqlite3.Connection, req: Request, sub: str) -> Response:
    s = db.execute("SELECT * FROM subforums WHERE name = ?", (sub,)).fetchone()
    if s is None:
        return Response.not_found("forum")
    sort = req.arg("sort") or "new"
    order = {"new": "id DESC", "top": "score DESC, id", "title": "title"}.get(sort, "id DESC")
    posts = db.execute(
        f"SELECT * FROM posts WHERE subforum = ? AND deleted = 0 ORDER BY {order}", (sub,)
    ).fetchall()
    if sort == "top":  # the shown score includes the user's own vote
        posts.sort(key=lambda p: (-shown_score(db, p), p["id"]))
    subscribed = db.execute("SELECT 1 FROM subscriptions WHERE subforum = ?", (sub,)).fetchone()
    toggle = form(f"/f/{sub}/subscribe", button("Unsubscribe" if subscribed else "Subscribe"), cls="inline")
    sorts = " ".join(
        f"<a href='/f/{html_escape(sub)}?sort={k}'>{label}</a>"
        for k, label in (("new", "Newest"), ("top", "Top"), ("title", "By title"))
    )
    body = (
        f"<p class='muted'>{html_escape(s['description'])}</p><div class='row'><a class='button' href='/f/{html_escape(sub)}/new'>"
        f"New post</a>{toggle}</div><div class='row'>Sort: {sorts}</div>"
        + "".join(_post_line(db, p) for p in posts)
    )
    return site.page(f"f/{sub}", body)


@router.get("/post/<pid>")
def post(site: ForumSite, db: sqlite3.Connection, req: Request, pid: str) -> Response:
    p = post_row(db, pid)
    vote = my_vote(db, p["id"])
    votes = form(
        f"/post/{p['id']}/vote",
        button("Upvote" + (" (voted)" if vote > 0 else ""), "dir", "up")
        + button("Downvote" + (" (voted)" if vote < 0 else ""), "dir", "down"),
        cls="inline",
    )
    own = ""
    if p["author"] == ME:
        own = f"<a class='button' href='/post/{p['id']}/edit'>Edit post</a>" + form(
            f"/post/{p['id']}/delete", button("Delete post"), cls="inline"
        )
    comments = db.execute("SELECT * FROM comments WHERE post_id=? ORDER BY id", (p["id"],)).fetchall()
    clist = "".join(
        f"<div class='post'><b>{html_escape(c['author'])}</b>: <span>{html_escape(c['body'])}</span></div>" for c in comments
    )
    add = form(
        f"/post/{p['id']}/comment",
        "<label>Comment <textarea name='body' aria-label='Comment' rows='2' cols='60'></textarea></label>"
        + button("Post comment"),
    )
    body = (
        f"<p class='muted'>in <a href='/f/{html_escape(p['subforum'])}'>f/{html_escape(p['subforum'])}</a> by "
        f"<a href='/user/{html_escape(p['author'])}'>{html_escape(p['author'])}</a> · <span>{shown_score(db, p)} points</span></p>"
        f"<p>{html_escape(p['body'])}</p><div class='row'>{votes}{own}</div><h2>{len(comments)} comments</h2>{clist}{add}"
    )
    return site.page(p["title"], body)


@router.post("/post/<pid>/vote")
def vote(site: ForumSite, db: sqlite3.Connection, req: Request, pid: str) -> Response:
    p = post_row(db, pid)
    value = 1 if req.arg("dir") == "up" else -1
    if my_vote(db, p["id"]) == value:  # voting the same way again takes the vote back
        db.execute("DELETE FROM votes WHERE post_id = ?", (p["id"],))
    else:
        db.execute("INSERT OR REPLACE INTO votes VALUES (?, ?)", (p["id"], value))
    return Response.redirect(f"/post/{p['id']}")


@router.post("/post/<pid>/comment")
def comment(site: ForumSite, db: sqlite3.Connection, req: Request, pid: str) -> Response:
    p = post_row(db, pid)
    if req.arg("body"):
        db.execute(
            "INSERT INTO comments(post_id, author, body) VALUES (?,?,?)", (p["id"], ME, req.arg("body"))
        )
    return Response.redirect(f"/post/{p['id']}")


@router.get("/post/<pid>/edit")
def edit_form(site: ForumSite, db: sqlite3.Connection, req: Request, pid: str) -> Response:
    p = post_row(db, pid)
    if p["author"] != ME:
        return site.page("Not allowed", "<p>You can only edit your own posts.</p>")
    return site.page("Edit post", _post_form(f"/post/{p['id']}/edit", p["title"], p["body"], "Save changes"))


@router.post("/post/<pid>/edit")
def edit(site: ForumSite, db: sqlite3.Connection, req: Request, pid: str) -> Response:
    p = post_row(db, pid)
    if p["author"] == ME and req.arg("title"):
        db.execute(
            "UPDATE posts SET title=?, body=? WHERE id=?", (req.arg("title"), req.arg("body"), p["id"])
        )
    return Response.redirect(f"/post/{p['id']}")


@router.post("/post/<pid>/delete")
def delete(site: ForumSite, db: sqlite3.Connection, req: Request, pid: str) -> Response:
    p = post_row(db, pid)
    if p["author"] == ME:
        db.execute("UPDATE posts SET deleted = 1 WHERE id = ?", (p["id"],))
    return Response.redirect(f"/f/{p['subforum']}")


def _post_form(action: str, title: str = "", body: str = "", label: str = "Create post") -> str:
    return form(
        action,
        "<div class='row'>" + text_input("title", "Title", title) + "</div><div class='row'><label>Body "
        f"<textarea name='body' aria-label='Body' rows='4' cols='60'>{html_escape(body)}</textarea></label></div>"
        + button(label),
    )


@router.get("/f/<sub>/new")
def new_form(site: ForumSite, db: sqlite3.Connection, req: Request, sub: str) -> Response:
    if db.execute("SELECT 1 FROM subforums WHERE name=?", (sub,)).fetchone() is None:
        return Response.not_found("forum")
    return site.page(f"New post in f/{sub}", _post_form(f"/f/{sub}/new"))


@router.post("/f/<sub>/new")
def create(site: ForumSite, db: sqlite3.Connection, req: Request, sub: str) -> Response:
    if not req.arg("title"):
        return site.page(f"New post in f/{sub}", "<p>A title is required.</p>" + _post_form(f"/f/{sub}/new"))
    cur = db.execute(
        "INSERT INTO posts(subforum, author, title, body, score) VALUES (?,?,?,?,1)",
        (sub, ME, req.arg("title"), req.arg("body")),
    )
    return Response.redirect(f"/post/{cur.lastrowid}")


@router.post("/f/<sub>/subscribe")
def subscribe(site: ForumSite, db: sqlite3.Connection, req: Request, sub: str) -> Response:
    if db.execute("SELECT 1 FROM subscriptions WHERE subforum=?", (sub,)).fetchone():
        db.execute("DELETE FROM subscriptions WHERE subforum=?", (sub,))
    else:
        db.execute("INSERT INTO subscriptions VALUES (?)", (sub,))
    return Response.redirect(f"/f/{sub}")


@router.get("/user/<name>")
def profile(site: ForumSite, db: sqlite3.Connection, req: Request, name: str) -> Response:
    u = db.execute("SELECT * FROM users WHERE name = ?", (name,)).fetchone()
    if u is None:
        return Response.not_found("user")
    posts = db.execute("SELECT * FROM posts WHERE author=? AND deleted=0 ORDER BY id", (name,)).fetchall()
    edit_bio = ""
    if name == ME:
        edit_bio = form(f"/user/{ME}/bio", text_input("bio", "Bio", u["bio"]) + button("Save bio"), cls="row")
    body = (
        f"<p>{html_escape(u['bio'])}</p><p class='muted'>{u['karma']} karma · {len(posts)} posts</p>{edit_bio}"
        + "".join(_post_line(db, p) for p in posts)
    )
    return site.page(f"u/{name}", body)


@router.post("/user/<name>/bio")
def bio(site: ForumSite, db: sqlite3.Connection, req: Request, name: str) -> Response:
    if name == ME:
        db.execute("UPDATE users SET bio = ? WHERE name = ?", (req.arg("bio"), ME))
    return Response.redirect(f"/user/{name}")
