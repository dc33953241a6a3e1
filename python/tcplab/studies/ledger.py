"""Claims ledgers: every sentence of a seed, mapped to the checks that test it or to a reason.

A bundled study reproduces a seed (its slides, kept verbatim in ``docs/seeds/``). Its
ledger, ``python/tcplab/studies/<study>/ledger.toml``, quotes the seed's sentences
verbatim and gives each exactly one status:

- ``checked``: the sentence states a result, and ``findings`` (and optionally
  ``checks``) name the finding(s) and check(s) of ``findings.json`` that test it;
- ``not testable``: it states a result that tcplab cannot test, and ``reason`` says
  why (for example, a production trial the seed only cites);
- ``setup``: it describes the set-up (a link, a workload, a parameter), so there is
  nothing to check;
- ``context``: it is not a statement about the study's results or set-up (titles,
  authors, motivation, questions, outlines). Context lines are listed so that
  coverage can be tested mechanically; they are not counted as result sentences.

Checks that tcplab adds beyond the seed are listed as ``[[extension]]`` entries
(``findings`` and/or ``checks``, and ``why``); they are marked ``extension`` in
``findings.json`` and never counted as the seed's.

The file::

    study = "satellite"
    seed = "004_af47799115785341"          # docs/seeds/<seed>.txt

    [[sentence]]
    id = "s01"                              # unique within the ledger
    slide = "Conclusions"                   # where the sentence is, in words
    text = "Enhanced TCP performs better than Reference TCP"   # verbatim (whitespace may differ)
    status = "checked"                      # checked | not testable | setup | context
    findings = ["S1"]
    checks = ["S1a"]                        # optional: the checks that test this sentence
    reason = ""                             # required for "not testable"
    note = ""                               # optional: how the sentence was read

    [[extension]]
    findings = ["S6"]
    why = "an ablation the seed did not run"

:meth:`Ledger.coverage` counts the result sentences (every status but ``context``):
"31 result sentences: 22 checked, 6 not testable, 3 set-up". :meth:`Ledger.problems`
tests a ledger against its seed's text (every quote is verbatim; every line of the
seed with four or more words is quoted by some entry), and
:meth:`Ledger.finding_problems` against a ``findings.json`` (every finding appears in
the ledger, and extensions are exactly the ledger's).

Example:
    >>> lg = Ledger.parse('''
    ... study = "demo"
    ... seed = "999_x"
    ... [[sentence]]
    ... id = "s1"
    ... text = "IW10 improves performance"
    ... status = "checked"
    ... findings = ["F1"]
    ... [[sentence]]
    ... id = "s2"
    ... text = "Thanks for listening"
    ... status = "context"
    ... ''', "demo.toml")
    >>> lg.coverage_text()
    '1 result sentence: 1 checked, 0 not testable, 0 set-up'
    >>> lg.problems("Thanks for listening. \\n- IW10 improves   performance\\n")
    []
    >>> lg.problems("IW10 hurts performance badly here")
    ["s1: not found verbatim in the seed: 'IW10 improves performance'", ...]
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["STATUSES", "SEEDS_DIR", "Sentence", "Extension", "Ledger", "LedgerError", "seed_text", "ledger_path",
           "load", "normalise", "statement_lines", "coverage_text"]

#: The statuses of a ledger entry.
STATUSES = ("checked", "not testable", "setup", "context")

#: Where the seed texts are kept, verbatim (``docs/seeds/<stem>.txt``).
SEEDS_DIR = Path(__file__).resolve().parents[3] / "docs" / "seeds"

#: A line of the seed with at least this many words must be quoted by the ledger.
MIN_WORDS = 4

_WORD = re.compile(r"[A-Za-z]{2,}")


class LedgerError(ValueError):
    """A ledger file breaks the format; the message names the file, the entry and the field."""


def normalise(text: str) -> str:
    """Text as ledger quotes are compared: whitespace collapsed, bullet and emphasis marks dropped.

    Example:
        >>> normalise("- **SLACP is  extremely useful**\\n  when")
        'SLACP is extremely useful when'
    """
    text = re.sub(r"\*\*|__", "", text)
    text = re.sub(r"(?m)^\s*(?:[-*•◆■▪]|#+)\s+", "", text)
    return re.sub(r"\s+", " ", text).strip()


def statement_lines(seed: str) -> list[str]:
    """The lines of a seed text that a ledger must quote: those with :data:`MIN_WORDS` or more words.

    Example:
        >>> statement_lines("Title\\n- IW10 slightly more aggressive here\\n| a | b |")
        ['IW10 slightly more aggressive here']
    """
    return [normalise(line) for line in seed.splitlines() if len(_WORD.findall(line)) >= MIN_WORDS]


def seed_text(stem: str) -> str:
    """The verbatim text of seed ``stem`` (``docs/seeds/<stem>.txt``)."""
    return (SEEDS_DIR / f"{stem}.txt").read_text(encoding="utf-8")


@dataclass(frozen=True)
class Sentence:
    """One ledger entry: a verbatim sentence of the seed and its status."""

    id: str
    text: str
    status: str
    slide: str = ""
    findings: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()
    reason: str = ""
    note: str = ""

    @property
    def counted(self) -> bool:
        """A result sentence (every status but ``context``)."""
        return self.status != "context"

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "slide": self.slide, "text": self.text, "status": self.status,
                "findings": list(self.findings), "checks": list(self.checks), "reason": self.reason, "note": self.note}


@dataclass(frozen=True)
class Extension:
    """Findings or checks tcplab adds beyond the seed, and why."""

    why: str
    findings: tuple[str, ...] = ()
    checks: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {"findings": list(self.findings), "checks": list(self.checks), "why": self.why}


_SENTENCE_KEYS = {"id", "slide", "text", "status", "findings", "checks", "reason", "note"}
_EXTENSION_KEYS = {"findings", "checks", "why"}


def _strings(value: Any, where: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise LedgerError(f"{where}: {key} = {value!r}; expected a list of ids (strings)")
    return tuple(value)


@dataclass(frozen=True)
class Ledger:
    """A study's claims ledger (see the module doc)."""

    study: str
    seed: str
    sentences: tuple[Sentence, ...]
    extensions: tuple[Extension, ...] = ()
    path: str = ""

    # ---- reading ---------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str, path: str = "ledger.toml") -> "Ledger":
        """A ledger from TOML text; :class:`LedgerError` names ``path``, the entry and the field."""
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as e:
            raise LedgerError(f"{path}: {e}") from None
        unknown = set(doc) - {"study", "seed", "sentence", "extension"}
        if unknown:
            raise LedgerError(f"{path}: unknown key(s) {', '.join(sorted(unknown))}; accepted: study, seed, "
                              "sentence, extension")
        for key in ("study", "seed"):
            if not isinstance(doc.get(key), str) or not doc[key]:
                raise LedgerError(f"{path}: {key} must be a non-empty string")
        sentences, seen = [], set()
        for i, e in enumerate(doc.get("sentence", []), 1):
            where = f"{path}: sentence {i} (id {e.get('id')!r})"
            unknown = set(e) - _SENTENCE_KEYS
            if unknown:
                raise LedgerError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; accepted: "
                                  + ", ".join(sorted(_SENTENCE_KEYS)))
            for key in ("id", "text", "status"):
                if not isinstance(e.get(key), str) or not e[key].strip():
                    raise LedgerError(f"{where}: {key} must be a non-empty string")
            if e["id"] in seen:
                raise LedgerError(f"{where}: duplicate id")
            seen.add(e["id"])
            if e["status"] not in STATUSES:
                raise LedgerError(f"{where}: status = {e['status']!r}; accepted: {', '.join(STATUSES)}")
            s = Sentence(id=e["id"], text=e["text"], status=e["status"], slide=str(e.get("slide", "")),
                         findings=_strings(e.get("findings", []), where, "findings"),
                         checks=_strings(e.get("checks", []), where, "checks"),
                         reason=str(e.get("reason", "")), note=str(e.get("note", "")))
            if s.status == "checked" and not s.findings:
                raise LedgerError(f"{where}: status 'checked' needs findings = [...]")
            if s.status != "checked" and (s.findings or s.checks):
                raise LedgerError(f"{where}: only a 'checked' sentence names findings or checks")
            if s.status == "not testable" and not s.reason.strip():
                raise LedgerError(f"{where}: status 'not testable' needs a reason")
            sentences.append(s)
        extensions = []
        for i, e in enumerate(doc.get("extension", []), 1):
            where = f"{path}: extension {i}"
            unknown = set(e) - _EXTENSION_KEYS
            if unknown:
                raise LedgerError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}; accepted: findings, checks, why")
            x = Extension(why=str(e.get("why", "")), findings=_strings(e.get("findings", []), where, "findings"),
                          checks=_strings(e.get("checks", []), where, "checks"))
            if not x.why.strip() or not (x.findings or x.checks):
                raise LedgerError(f"{where}: needs why and at least one of findings, checks")
            extensions.append(x)
        return cls(study=doc["study"], seed=doc["seed"], sentences=tuple(sentences), extensions=tuple(extensions),
                   path=path)

    # ---- counting ----------------------------------------------------------------------

    def coverage(self) -> dict[str, Any]:
        """Counts of the result sentences by status, and the not-testable reasons.

        Keys: ``result_sentences``, ``checked``, ``not_testable``, ``setup``,
        ``context`` (not counted among result sentences), ``not_testable_reasons``
        (``[{"id", "text", "reason"}]``), ``extensions``.
        """
        counted = [s for s in self.sentences if s.counted]
        return {"result_sentences": len(counted),
                "checked": sum(s.status == "checked" for s in counted),
                "not_testable": sum(s.status == "not testable" for s in counted),
                "setup": sum(s.status == "setup" for s in counted),
                "context": sum(not s.counted for s in self.sentences),
                "not_testable_reasons": [{"id": s.id, "text": s.text, "reason": s.reason}
                                         for s in counted if s.status == "not testable"],
                "extensions": len(self.extensions)}

    def coverage_text(self) -> str:
        """The coverage in one line, as the report and the dashboard print it."""
        return coverage_text(self.coverage())

    def as_json(self) -> dict[str, Any]:
        """The ledger for ``findings.json``: coverage, sentences and extensions."""
        return {"path": self.path, "seed": self.seed, "coverage": self.coverage(),
                "sentences": [s.as_dict() for s in self.sentences],
                "extensions": [x.as_dict() for x in self.extensions]}

    def sentences_of(self, finding_id: str) -> list[Sentence]:
        """The sentences a finding tests."""
        return [s for s in self.sentences if finding_id in s.findings]

    # ---- testing -----------------------------------------------------------------------

    def problems(self, seed: str) -> list[str]:
        """What breaks the ledger against the seed's text: quotes not verbatim, lines not quoted."""
        text = normalise(seed)
        out = [f"{s.id}: not found verbatim in the seed: {normalise(s.text)!r}"
               for s in self.sentences if normalise(s.text) not in text]
        quotes = [normalise(s.text) for s in self.sentences]
        for line in statement_lines(seed):
            if any(line in q for q in quotes):
                continue
            rest = line
            # Longest first, so that a short quote inside a longer one cannot break it.
            for q in sorted(quotes, key=len, reverse=True):
                if q and q in rest:
                    rest = rest.replace(q, " ")
            if len(_WORD.findall(rest)) >= MIN_WORDS - 1:
                out.append(f"seed line not in the ledger: {line!r}")
        return out

    def finding_problems(self, doc: dict[str, Any]) -> list[str]:
        """What breaks the ledger against a study's ``findings.json``.

        Every finding of ``doc`` is named by a checked sentence or an extension; every
        finding the ledger names exists in ``doc`` (unless it was not run); every check
        the ledger names exists; a finding or check marked ``extension`` in ``doc`` is
        an extension in the ledger, and the other way round.
        """
        out = []
        findings = {f["id"]: f for f in doc.get("findings", [])}
        checks = {c["id"]: c for f in findings.values() for c in f.get("checks", [])}
        named = {fid for s in self.sentences for fid in s.findings}
        ext_f = {fid for x in self.extensions for fid in x.findings}
        ext_c = {cid for x in self.extensions for cid in x.checks}
        for fid, f in findings.items():
            if fid not in named and fid not in ext_f:
                out.append(f"finding {fid} is in findings.json but in no ledger sentence or extension")
            if bool(f.get("extension")) != (fid in ext_f):
                out.append(f"finding {fid}: extension = {bool(f.get('extension'))} in findings.json, "
                           f"{fid in ext_f} in the ledger")
            for c in f.get("checks", []):
                if bool(c.get("extension")) and c["id"] not in ext_c and fid not in ext_f:
                    out.append(f"check {c['id']} is marked extension in findings.json but not in the ledger")
        for fid in sorted((named | ext_f) - set(findings)):
            out.append(f"finding {fid} is named in the ledger but not in findings.json")
        # A finding that was not run in this invocation has no checks: the checks the
        # ledger names for it cannot be looked for.
        not_run = {fid for fid, f in findings.items() if f.get("verdict") == "not run"}
        skip = {c for s in self.sentences if s.findings and set(s.findings) <= not_run for c in s.checks}
        skip |= {c for x in self.extensions if x.findings and set(x.findings) <= not_run for c in x.checks}
        for cid in sorted({c for s in self.sentences for c in s.checks} | ext_c):
            if cid in skip:
                continue
            if cid not in checks and findings:
                out.append(f"check {cid} is named in the ledger but not in findings.json")
            elif cid in ext_c and cid in checks and not checks[cid].get("extension"):
                out.append(f"check {cid} is a ledger extension but not marked extension in findings.json")
        return out


def coverage_text(cov: dict[str, Any]) -> str:
    """``"31 result sentences: 22 checked, 6 not testable, 3 set-up"`` from :meth:`Ledger.coverage`.

    Example:
        >>> coverage_text({"result_sentences": 2, "checked": 1, "not_testable": 1, "setup": 0})
        '2 result sentences: 1 checked, 1 not testable, 0 set-up'
    """
    n = cov["result_sentences"]
    return (f"{n} result sentence{'s' if n != 1 else ''}: {cov['checked']} checked, {cov['not_testable']} not testable, "
            f"{cov['setup']} set-up")


def ledger_path(study: str) -> Path:
    """Where study ``study``'s ledger is: ``python/tcplab/studies/<module>/ledger.toml``.

    Example:
        >>> ledger_path("iw-irto").parts[-2:]
        ('iw_irto', 'ledger.toml')
    """
    return Path(__file__).resolve().parent / study.replace("-", "_") / "ledger.toml"


def load(study: str | Path) -> Ledger:
    """The ledger of a study by name (or a ledger file by path)."""
    path = Path(study) if isinstance(study, Path) or str(study).endswith(".toml") else ledger_path(str(study))
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise LedgerError(f"{path}: {e.strerror or e}") from None
    try:
        shown = str(path.resolve().relative_to(SEEDS_DIR.parents[1]))
    except ValueError:
        shown = str(path)
    return Ledger.parse(text, shown)
