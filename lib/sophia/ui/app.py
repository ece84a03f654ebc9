"""The viewer's Starlette app: server-rendered Jinja2 pages (autoescaped), no script.

``build(home, token, hosts)`` returns the ASGI app wrapped in :class:`security.Guard`. Pages read
through ``ui.data``; the writes (forget, edit a rule or a learned procedure, retry or drop a digest job) go
through ``ui.actions`` after a confirmation page. Every page says what fills it; what is shown passes
through ``evidence.plain`` (no terminal escape codes) and Jinja's autoescape.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

import jinja2
from markupsafe import Markup
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route
from starlette.templating import Jinja2Templates

from .. import kinds, paths
from ..errors import SophiaError
from ..timeutil import now
from . import actions, charts, data
from .cache import Slow, stat_key
from .security import Guard, csrf_for

HERE = Path(__file__).parent
NAV = (("/", "Overview"), ("/episodes", "Episodes"), ("/rules", "Rules"), ("/procedures", "Procedures"),
       ("/facts", "Facts & foresight"), ("/profile", "Profile"), ("/scenes", "Scenes"), ("/conflicts", "Conflicts"),
       ("/team", "Team"), ("/digests", "Digest queue"), ("/guardian", "Guardian"))
# where to go back to after forgetting a memory of a kind
BACK = {"episode": "/episodes", "rule": "/rules", "fact": "/facts", "foresight": "/facts", "profile": "/profile",
        "scene": "/scenes", "procedure": "/procedures"}


class Pages:
    """The route handlers, bound to one state home and token."""

    def __init__(self, home: Path, token: str) -> None:
        self.home, self.csrf = home, csrf_for(token)
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(HERE / "templates"), autoescape=True,
                                 finalize=_plain)
        env.filters["pct"] = lambda x: "-" if x is None else f"{round(float(x) * 100)}%"
        env.filters["q"] = lambda s: quote(str(s), safe="")
        env.filters["code"] = _code_spans
        env.globals.update(NAV=NAV, VERDICT_LABELS=charts.VERDICT_LABELS)
        self.templates = Jinja2Templates(env=env)
        ed, logs = paths.episodes_dir(home), paths.logs_dir(home)
        self.growth = Slow(lambda: data.growth(home), lambda: stat_key(ed))
        db = paths.index_db_path(home)
        self.storage = Slow(lambda: data.storage(home), lambda: stat_key(db, Path(f"{db}-wal"), ed, paths.memory_dir(home),
                                                                         logs, home / "digests"))
        self.guardian_log = Slow(lambda: data.guardian(home), lambda: stat_key(logs / "guardian_blocks.jsonl"))

    def render(self, request: Request, name: str, status: int = 200, **ctx: Any) -> Response:
        ctx.update(csrf=self.csrf, path=request.url.path, learning=data.learning(self.home))
        return self.templates.TemplateResponse(request, name, ctx, status_code=status)

    # ------------------------------------------------------------ pages

    def overview(self, request: Request) -> Response:
        sm = data.self_model(self.home)
        g = self.growth.get() or {"weeks": [], "trend_line": None, "episodes": None, "projects": []}
        caps = sorted(sm.get("capabilities", {}).items(), key=lambda kv: -kv[1]["proficiency"])
        gd = self.guardian_log.get() or data.guardian_empty()
        storage = self.storage.get() or {"sizes": {}, "home": str(self.home), "index_error": "measuring…"}
        return self.render(request, "overview.html", sm=sm, caps=caps, growth=g, guardian=gd["summary"],
                           storage=storage, **_overview_charts(g, caps, data.capability_history(self.home), gd))

    def episodes(self, request: Request) -> Response:
        q = request.query_params
        query, as_of, known_at = q.get("q", "").strip(), q.get("as_of", "").strip(), q.get("known_at", "").strip()
        types = [t for t in q.getlist("type") if t in kinds.item_types()] or None
        found = data.search(self.home, query, as_of, known_at, types) if query else None
        page = data.episodes_page(self.home, _int(q.get("page"), 0))
        return self.render(request, "episodes.html", query=query, as_of=as_of, known_at=known_at, found=found,
                           types=types or [], all_types=kinds.item_types(), page=page)

    def episode(self, request: Request) -> Response:
        ep = data.episode(self.home, request.path_params["eid"])
        if ep is None:
            raise HTTPException(404, "no such episode")
        return self.render(request, "episode.html", ep=ep)

    def rules(self, request: Request) -> Response:
        return self.render(request, "rules.html", rules=data.rules(self.home))

    def procedures(self, request: Request) -> Response:
        return self.render(request, "procedures.html", **data.procedures(self.home, _int(request.query_params.get("page"), 0)))

    def facts(self, request: Request) -> Response:
        facts, foresight = data.listed(self.home, "facts"), data.listed(self.home, "foresight")
        return self.render(request, "facts.html", facts=facts, foresight=foresight,
                           calendar=charts.windows(data.windows(foresight + facts), now()))

    def profile(self, request: Request) -> Response:
        return self.render(request, "profile.html", groups=data.profile(self.home))

    def scenes(self, request: Request) -> Response:
        return self.render(request, "scenes.html", scenes=data.listed(self.home, "scenes"))

    def team(self, request: Request) -> Response:
        return self.render(request, "team.html", groups=data.team(self.home))

    def conflicts(self, request: Request) -> Response:
        return self.render(request, "conflicts.html", conflicts=data.listed(self.home, "conflicts"))

    def digests(self, request: Request) -> Response:
        d = data.digests(self.home)
        chart = charts.time_bars([x["day"] for x in d["per_day"]], {"USD": [x["cost_usd"] for x in d["per_day"]]},
                                 title="cost per day (USD)", empty="nothing spent yet")
        return self.render(request, "digests.html", d=d, chart=chart)

    def guardian(self, request: Request) -> Response:
        gd = self.guardian_log.get() or data.guardian_empty()
        return self.render(request, "guardian.html", g=gd, chart=_guardian_chart(gd))

    def style(self, request: Request) -> Response:
        """The sheet, and each guardian verdict's colour from ``charts.VERDICTS`` (the charts' own)."""
        verdicts = "".join(f".d-{k} {{ color: {c}; font-weight: 600; }}\n" for k, c in charts.VERDICTS.items())
        return Response((HERE / "static" / "style.css").read_text(encoding="utf-8") + verdicts, media_type="text/css")

    # ------------------------------------------------------------ confirmations and writes

    def confirm_forget(self, request: Request) -> Response:
        mid = request.path_params["mid"]
        item = data.find_memory(self.home, mid)
        if item is None:
            raise HTTPException(404, f"no memory {mid}")
        return self.render(request, "confirm.html", action=f"/forget/{quote(mid, safe='')}", verb="Forget",
                           title=f"Forget {mid}?", item=item, fields={},
                           note="It is removed from its file and from the index, as `s3 forget` does.")

    async def forget(self, request: Request) -> Response:
        mid = request.path_params["mid"]
        out = await _threaded(actions.forget, self.home, mid)
        kind = kinds.for_id(mid)
        return self.render(request, "done.html", message=f"Forgot {out['removed']} (from {out['from']}).",
                           back=BACK.get(kind.name if kind else "", "/episodes"))

    def edit_rule_form(self, request: Request) -> Response:
        rule = next((r for r in data.rules(self.home) if r.get("id") == request.path_params["rid"]), None)
        if rule is None:
            raise HTTPException(404, "no such rule")
        return self.render(request, "rule_edit.html", rule=rule)

    def edit_procedure_form(self, request: Request) -> Response:
        proc = data.procedure(self.home, request.path_params["pid"])
        if proc is None:
            raise HTTPException(404, "no such procedure")
        from ..learning.procedures import STATUSES, UNRELIABLE

        text = str(proc.get("text") or "").removeprefix(UNRELIABLE).split(" [failed ", 1)[0]
        return self.render(request, "procedure_edit.html", proc=proc, text=text, statuses=STATUSES)

    async def edit_procedure(self, request: Request) -> Response:
        pid = request.path_params["pid"]
        form = await _form(request)
        text, status = form.get("text", ""), form.get("status", "")
        if form.get("confirmed") != "yes":
            return self.render(request, "confirm.html", action=f"/procedures/{quote(pid, safe='')}/edit",
                               verb="Save", title=f"Change procedure {pid}?", item={"id": pid, "text": text},
                               fields={"text": text, "status": status, "confirmed": "yes"},
                               note=f"Status {status}. Its text is replaced (redacted); its confidence stays what "
                                    "its runs say.")
        await _threaded(actions.edit_procedure, self.home, pid, text, status)
        return RedirectResponse("/procedures", status_code=303)

    async def edit_rule(self, request: Request) -> Response:
        rid = request.path_params["rid"]
        form = await _form(request)
        text, conf = form.get("text", ""), actions.parse_confidence(form.get("confidence", ""))
        if form.get("confirmed") != "yes":
            return self.render(request, "confirm.html", action=f"/rules/{quote(rid, safe='')}/edit", verb="Save",
                               title=f"Change rule {rid}?", item={"id": rid, "text": text, "confidence": conf},
                               fields={"text": text, "confidence": str(conf), "confirmed": "yes"},
                               note="The rule's text and confidence are replaced; decay starts again from now.")
        await _threaded(actions.edit_rule, self.home, rid, text, conf)
        return RedirectResponse("/rules", status_code=303)

    def confirm_job(self, request: Request) -> Response:
        jid, act = request.path_params["jid"], request.path_params["act"]
        job = next((j for j in data.digests(self.home)["jobs"] if j["id"] == jid), None)
        if job is None or act not in ("retry", "drop"):
            raise HTTPException(404, "no such job")
        note = ("It goes back in the queue, due now, its attempts reset." if act == "retry"
                else "Its session is then never digested, unless queued again.")
        return self.render(request, "confirm.html", action=f"/digests/{quote(jid, safe='')}/{act}",
                           verb=act.capitalize(), title=f"{act.capitalize()} job {jid}?", item=job, fields={},
                           note=note)

    async def job(self, request: Request) -> Response:
        jid, act = request.path_params["jid"], request.path_params["act"]
        if act == "retry":
            ok = await _threaded(actions.retry_job, self.home, jid)
            message = f"{jid} is back in the queue." if ok else f"{jid} is neither parked nor pending."
        elif act == "drop":
            was = await _threaded(actions.drop_job, self.home, jid)
            message = (f"No job {jid}." if was is None else f"{jid} is running; wait for it or stop the worker."
                       if was == "running" else f"Dropped {jid} (was {was}).")
        else:
            raise HTTPException(404, "no such action")
        return self.render(request, "done.html", message=message, back="/digests")

    # ------------------------------------------------------------ errors

    def not_found(self, request: Request, exc: Exception) -> Response:
        detail = getattr(exc, "detail", "") or "Not Found"
        status = getattr(exc, "status_code", 404)
        return self.render(request, "error.html", status=status, title=f"{status}", message=str(detail))

    def bad_input(self, request: Request, exc: Exception) -> Response:
        return self.render(request, "error.html", status=400, title="Cannot do that", message=str(exc))


def _code_spans(text: Any) -> Markup:
    """Escaped text whose `backticked` parts (commands, paths) are shown as code."""
    import re
    from html import escape

    from ..evidence import plain

    return Markup(re.sub(r"`([^`\n]+)`", r"<code>\1</code>", escape(plain(str(text or "")), quote=True)))


def _plain(value: Any) -> Any:
    """What a template prints: stored text without terminal escape codes (charts, already markup, as they are)."""
    if isinstance(value, str) and "\x1b" in value and not isinstance(value, Markup):
        from ..evidence import plain

        return plain(value)
    return value


def _overview_charts(g: dict[str, Any], caps: list[Any], hist: dict[str, Any], gd: dict[str, Any]) -> dict[str, Any]:
    """The overview's charts: rates as percentages, weeks and days at their dates."""
    weeks = [w["week"] for w in g["weeks"]]
    none_yet = "no episodes measured yet (2 tool calls or more; `s3 backfill` reads the sessions you already had)"
    return {
        "growth_chart": charts.time_lines(weeks, {"sessions that succeeded": [w["success_rate"] for w in g["weeks"]],
                                                  "tool calls that failed": [w["failure_rate"] for w in g["weeks"]]},
                                          percent=True, title="per week", empty=none_yet),
        "steps_chart": charts.time_bars(weeks, {"steps per episode": [w["steps_per_episode"] or 0 for w in g["weeks"]]},
                                        step_days=7, title="steps per episode per week", empty=none_yet),
        "by_project": _per_project_chart(g["projects"], weeks, none_yet),
        "caps_chart": charts.hbars([n for n, _ in caps][:12], [r["proficiency"] for _, r in caps][:12], percent=True,
                                   title="proficiency", empty="no capabilities yet"),
        "caps_history": charts.time_lines(hist["days"], hist["series"], percent=True, step_days=1, breaks=False,
                                          title="proficiency by day", empty="no reflection has rated one yet"),
        "guardian_chart": _guardian_chart(gd),
    }


def _per_project_chart(projects: list[dict[str, Any]], weeks: list[str], empty: str) -> Any:
    """Success per week in the busiest projects, each named by enough of its path to tell it apart."""
    names = charts.short_names([p["project"] for p in projects])
    series = {}
    for p in projects:
        rate = {w["week"]: w["success_rate"] for w in p["weeks"]}
        series[names[p["project"]]] = [rate.get(w) for w in weeks]
    return charts.time_lines(weeks, series, percent=True, title="success per week by project", empty=empty)


def _guardian_chart(gd: dict[str, Any]) -> Any:
    """Every verdict the headline counts (denied, asked, allowed once), each in its one colour."""
    days = gd["summary"]["by_day"]
    kinds_ = [k for k in charts.VERDICTS if any(d.get(k) for d in days)] or ["deny", "ask"]
    return charts.time_bars([d["day"] for d in days], {k: [d.get(k, 0) for d in days] for k in kinds_},
                            colours=charts.VERDICTS, names=charts.VERDICT_LABELS, title="guardian decisions per day",
                            empty="the guardian has not asked, denied or let anything through once in these days")


def _int(raw: str | None, default: int) -> int:
    try:
        return max(0, int(raw or default))
    except ValueError:
        return default


async def _form(request: Request) -> dict[str, str]:
    """The url-encoded form (the guard has already checked its CSRF token)."""
    body = await request.body()
    return {k: v[0] for k, v in parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True).items()}


async def _threaded(fn: Any, *args: Any) -> Any:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(fn, *args)


def build(home: Path, token: str, hosts: frozenset[str]) -> Guard:
    p = Pages(home, token)
    routes = [
        Route("/", p.overview), Route("/episodes", p.episodes), Route("/episodes/{eid}", p.episode),
        Route("/rules", p.rules), Route("/rules/{rid}/edit", p.edit_rule_form, methods=["GET"]),
        Route("/procedures", p.procedures),
        Route("/procedures/{pid}/edit", p.edit_procedure_form, methods=["GET"]),
        Route("/procedures/{pid}/edit", p.edit_procedure, methods=["POST"]),
        Route("/rules/{rid}/edit", p.edit_rule, methods=["POST"]),
        Route("/facts", p.facts), Route("/profile", p.profile), Route("/scenes", p.scenes),
        Route("/conflicts", p.conflicts), Route("/team", p.team), Route("/digests", p.digests),
        Route("/guardian", p.guardian),
        Route("/forget/{mid:path}", p.confirm_forget, methods=["GET"]),
        Route("/forget/{mid:path}", p.forget, methods=["POST"]),
        Route("/digests/{jid}/{act}", p.confirm_job, methods=["GET"]),
        Route("/digests/{jid}/{act}", p.job, methods=["POST"]),
        Route("/static/style.css", p.style),
    ]
    p.growth.refresh()  # warm up: the overview's slow figures start now, not at the first visit
    p.storage.refresh()
    app = Starlette(routes=routes, exception_handlers={HTTPException: p.not_found, SophiaError: p.bad_input})
    return Guard(app, token, hosts)
