"""A reproduction report as data, rendered to Markdown and to HTML.

A :class:`Document` is a title, an introduction and :class:`Section` s; a section holds
paragraphs, tables (a header and rows of strings), figures (PNG files beside the report) and the
:class:`~rove.reproduce.verdicts.Claim` s it checks. Both renderings come from the same data, so
they always say the same thing.
"""

from __future__ import annotations

import html
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from .verdicts import FAILS, HOLDS, NOT_AVAILABLE, NOT_MEASURED, PARTLY, Claim

__all__ = ["Table", "Section", "Document", "markdown_table", "fmt", "spread"]


def fmt(x, spec: str = ".2f", none: str = "–") -> str:
    """A number for a table; ``none`` for missing values."""
    from .verdicts import is_number

    if not is_number(x):
        return none
    return format(float(x), spec)


def spread(xs, spec: str = ".2f") -> str:
    """``mean ± sd (n)`` of the numbers in ``xs`` (``–`` when there is none)."""
    from .verdicts import is_number, mean_sd

    v = [float(x) for x in xs if is_number(x)]
    if not v:
        return "–"
    m, sd = mean_sd(v)
    return f"{fmt(m, spec)} ± {fmt(sd, spec)} ({len(v)})"


@dataclass
class Table:
    header: list[str]
    rows: list[list[str]]
    caption: str = ""


@dataclass
class Section:
    title: str
    paragraphs: list[str] = field(default_factory=list)     # Markdown-light: **bold**, `code`
    tables: list[Table] = field(default_factory=list)
    figures: list[tuple[str, str]] = field(default_factory=list)   # (file name, caption)
    claims: list[Claim] = field(default_factory=list)
    verdict: str = NOT_MEASURED
    notes: list[str] = field(default_factory=list)            # [GAP]s and caveats
    error: str | None = None                                  # the experiment crashed: why
    counted: bool = True      # False: rove's own addition, reported beside, not in the counts


@dataclass
class Document:
    title: str
    intro: list[str] = field(default_factory=list)
    summary: Table | None = None
    sections: list[Section] = field(default_factory=list)


def _md_cell(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def markdown_table(t: Table) -> str:
    lines = ["| " + " | ".join(_md_cell(h) for h in t.header) + " |",
             "|" + "|".join("---" for _ in t.header) + "|"]
    lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in t.rows]
    out = "\n".join(lines)
    if t.caption:
        out = f"*{t.caption}*\n\n" + out
    return out


def _claims_table(claims: Sequence[Claim]) -> Table:
    return Table(["the source says", "where", "we measured", "criterion", "verdict"],
                 [[f"“{c.quote}”", c.where, c.measured, c.criterion, f"**{c.verdict}**"]
                  for c in claims])


_NOT_COUNTED = {True: "", False: " (not counted: rove's own measurement, not a claim of the source)"}


def to_markdown(doc: Document) -> str:
    parts = [f"# {doc.title}", ""]
    parts += [p + "\n" for p in doc.intro]
    if doc.summary is not None:
        parts += [markdown_table(doc.summary), ""]
    for s in doc.sections:
        parts += [f"## {s.title}", "", f"**Verdict: {s.verdict}**" + _NOT_COUNTED[s.counted], ""]
        parts += [p + "\n" for p in s.paragraphs]
        if s.claims:
            parts += [markdown_table(_claims_table(s.claims)), ""]
            for c in s.claims:
                parts += [f"- note ({c.where}): {n}" for n in c.notes]
            if any(c.notes for c in s.claims):
                parts.append("")
        for t in s.tables:
            parts += [markdown_table(t), ""]
        for name, caption in s.figures:
            parts += [f"![{caption}]({name})", "", f"*{caption}*", ""]
        if s.notes:
            parts += [f"- {n}" for n in s.notes] + [""]
    return "\n".join(parts).rstrip() + "\n"


_VERDICT_COLOURS = {HOLDS: "#1a7f37", PARTLY: "#9a6700", FAILS: "#cf222e",
                    NOT_MEASURED: "#6e7781", NOT_AVAILABLE: "#6e7781"}


def _inline(text: str) -> str:
    """Escape, then turn **bold** and `code` into tags."""
    import re

    t = html.escape(text)
    t = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", t)
    t = re.sub(r"`(.+?)`", r"<code>\1</code>", t)
    return t


def _html_table(t: Table) -> str:
    head = "".join(f"<th>{_inline(h)}</th>" for h in t.header)
    body = "".join("<tr>" + "".join(f"<td>{_inline(str(c))}</td>" for c in row) + "</tr>"
                   for row in t.rows)
    cap = f"<caption>{_inline(t.caption)}</caption>" if t.caption else ""
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _badge(verdict: str) -> str:
    colour = _VERDICT_COLOURS.get(verdict, "#6e7781")
    return f'<span class="badge" style="background:{colour}">{html.escape(verdict)}</span>'


def to_html(doc: Document) -> str:
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
           f"<title>{html.escape(doc.title)}</title><style>",
           "body{font-family:sans-serif;max-width:1150px;margin:2em auto;padding:0 1em;"
           "line-height:1.45}table{border-collapse:collapse;margin:1em 0;font-size:90%}"
           "td,th{border:1px solid #ccc;padding:3px 7px;vertical-align:top}"
           "th{background:#f3f3f3}img{max-width:100%}caption{text-align:left;font-style:italic}"
           ".badge{color:#fff;border-radius:4px;padding:1px 7px;font-weight:bold}"
           "code{background:#f3f3f3;padding:0 3px}", "</style></head><body>",
           f"<h1>{html.escape(doc.title)}</h1>"]
    out += [f"<p>{_inline(p)}</p>" for p in doc.intro]
    if doc.summary is not None:
        out.append(_html_table(doc.summary))
    for s in doc.sections:
        out.append(f"<h2>{html.escape(s.title)}</h2><p>Verdict: {_badge(s.verdict)}"
                   f"{html.escape(_NOT_COUNTED[s.counted])}</p>")
        out += [f"<p>{_inline(p)}</p>" for p in s.paragraphs]
        if s.claims:
            t = _claims_table(s.claims)
            rows = [[*r[:4], c.verdict] for r, c in zip(t.rows, s.claims)]
            head = "".join(f"<th>{h}</th>" for h in t.header)
            body = "".join("<tr>" + "".join(f"<td>{_inline(str(x))}</td>" for x in r[:4])
                           + f"<td>{_badge(r[4])}</td></tr>" for r in rows)
            out.append(f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>")
            notes = [(c.where, n) for c in s.claims for n in c.notes]
            if notes:
                out.append("<ul>" + "".join(f"<li>note ({_inline(w)}): {_inline(n)}</li>"
                                            for w, n in notes) + "</ul>")
        out += [_html_table(t) for t in s.tables]
        for name, caption in s.figures:
            out.append(f"<figure><img src='{html.escape(name)}' alt='{html.escape(caption)}'>"
                       f"<figcaption>{_inline(caption)}</figcaption></figure>")
        if s.notes:
            out.append("<ul>" + "".join(f"<li>{_inline(n)}</li>" for n in s.notes) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


VERDICTS = (HOLDS, PARTLY, FAILS, NOT_MEASURED, NOT_AVAILABLE)


def _counts(claims: Sequence[Claim]) -> dict[str, int]:
    return {v: sum(1 for c in claims if c.verdict == v) for v in VERDICTS}


def to_json(doc: Document) -> str:
    """The report as data (``report.json``): per section its verdict, its claims' counts per
    verdict, whether it counts (``counted``: false for rove's own measurements, which the
    report's overall ``counts`` leave out) and, per claim, the source's statement and where it is printed, what was measured,
    the criterion and the verdict; a section whose experiment crashed carries ``error``."""
    sections = []
    for s in doc.sections:
        sections.append({
            "title": s.title,
            "verdict": s.verdict,
            "counts": _counts(s.claims),
            "error": s.error,
            "counted": s.counted,
            "claims": [{"statement": c.quote, "where": c.where, "measured": c.measured,
                        "criterion": c.criterion, "verdict": c.verdict, "notes": list(c.notes)}
                       for c in s.claims],
            "notes": list(s.notes),
        })
    every = [c for s in doc.sections if s.counted for c in s.claims]
    return json.dumps({"title": doc.title, "counts": _counts(every), "sections": sections},
                      indent=2, ensure_ascii=False) + "\n"


def check_json(text: str) -> list[str]:
    """What is wrong with a ``report.json`` (empty when nothing): not JSON, a section that
    crashed, a claim without a known verdict or without its statement, criterion or source."""
    try:
        data = json.loads(text)
    except ValueError as e:
        return [f"not JSON: {e}"]
    problems = []
    for s in data.get("sections", []):
        if s.get("error"):
            problems.append(f"{s.get('title')}: crashed: {s['error']}")
        for c in s.get("claims", []):
            if c.get("verdict") not in VERDICTS:
                problems.append(f"{s.get('title')}: claim with verdict {c.get('verdict')!r}")
            for key in ("statement", "where", "criterion"):
                if not c.get(key):
                    problems.append(f"{s.get('title')}: claim without its {key}")
    if not data.get("sections"):
        problems.append("no section")
    return problems


def write(doc: Document, directory: Path) -> tuple[Path, Path]:
    """Write ``report.md``, ``report.html`` and ``report.json`` into ``directory``, each
    atomically; return the first two."""
    from ..results import write_bytes_atomically

    directory = Path(directory)
    md, ht = directory / "report.md", directory / "report.html"
    write_bytes_atomically(md, to_markdown(doc).encode("utf-8"))
    write_bytes_atomically(ht, to_html(doc).encode("utf-8"))
    write_bytes_atomically(directory / "report.json", to_json(doc).encode("utf-8"))
    return md, ht
