"""How a run's counts are held against what a library's docs say (docs/runtime-faults.md, "Promises").

A promise or caveat names one of ``lost``, ``twice``, ``concurrent``, ``stale``; the checker splits a job no
run completed by the library's own final state (``lost``, ``failed_by_policy``, ... ``unread``), an overlap by
whether both runs were executing (``concurrent_executing``, ``concurrent_stopped``), and ``stale`` by what the
library did with the late completion (``stale_accepted``, ``stale_refused``, ``stale_unobserved``). The rule,
written once here so the command, the report and the table agree:

- a **promise** about ``lost`` is held against ``lost`` only: a job failed by a documented policy, waiting for a
  documented recovery, or still queued is not lost. One whose final state was not read (``unread``: a
  version-1 runner, or ``inspect`` could not say) can neither break nor keep it: the promise is **not judged**;
  a **caveat** about ``lost`` counts ``lost`` and ``unread``;
- a **promise** about ``concurrent`` is held against ``concurrent_executing``: an overlap only while the harness
  had one run's process stopped is that process's frozen interval, not two runs at once (``twice`` and
  ``stale`` judge what it did); a **caveat** counts both;
- a **promise** about ``stale`` is a fencing claim (the library refuses a completion whose lease or lock has
  gone to another worker). It is held against ``stale_accepted``; a refused one is the fence working. An
  unobserved one can neither break nor keep it: such a run leaves the promise **not judged**, which the command
  treats as it treats a fault that reached no job (a check that did not run is no pass);
- a **caveat** about ``stale`` (the docs say a late completion may be taken, and claim no fence) counts the
  accepted and the unobserved ones: where nothing refuses a late completion, one not seen refused was taken;
- ``twice`` is its own count.

Older reports read as what they could tell: counts with ``stale`` read as all unobserved; counts with
``concurrent`` (not split) keep it as ``concurrent`` and leave the two split counts ``None``; a report of
version 1 never read the library's state, so its ``lost`` reads as ``unread``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from alkstore_faults.checker import CONCURRENT, NOT_COMPLETED, OUTCOMES, STALE

KEYS = (*NOT_COMPLETED, "twice", *CONCURRENT, "concurrent", *STALE, "cancelled")
"""Every count ``normalised`` returns, in the order a table shows them: the checker's outcomes, and
``concurrent`` for a report not split."""
assert set(KEYS) == {*OUTCOMES, "concurrent"}


def normalised(counts: Mapping[str, int | None], version: int = 2) -> dict[str, int | None]:
    """``counts`` with every key of ``KEYS``, an older report's counts read as the module's docstring says."""
    full: dict[str, int | None] = dict(counts)
    if "stale" in full and "stale_unobserved" not in full:
        stale = full.pop("stale")
        zero = None if stale is None else 0
        full.update(stale_accepted=zero, stale_refused=zero, stale_unobserved=stale)
    if "concurrent_executing" not in full:
        full.update(dict.fromkeys(CONCURRENT))
    else:
        full["concurrent"] = None
    if version < 2 and "unread" not in full:
        lost = full.get("lost")
        full.update({outcome: None if lost is None else 0 for outcome in NOT_COMPLETED}, unread=lost)
    full.setdefault("cancelled", None)
    return {key: full.get(key) for key in KEYS}


def _total(*counts: int | None) -> int | None:
    present = [count for count in counts if count is not None]
    return sum(present) if present else None


def judged(
    outcome: str, counts: Mapping[str, int | None], *, promise: bool, version: int = 2
) -> tuple[int | None, int]:
    """The count a promise (``promise=True``) or caveat about ``outcome`` is held against in one run, and how many
    of that run's findings leave it not judged (non-zero only for a promise about ``lost`` or ``stale``)."""
    full = normalised(counts, version)
    if outcome == "lost":
        if full["lost"] is None:
            return None, 0
        return (full["lost"], full["unread"] or 0) if promise else (_total(full["lost"], full["unread"]), 0)
    if outcome == "concurrent":
        if full["concurrent"] is not None:
            return full["concurrent"], 0
        executing = full["concurrent_executing"]
        return (executing, 0) if promise else (_total(executing, full["concurrent_stopped"]), 0)
    if outcome != "stale":
        return full[outcome], 0
    accepted, unobserved = full["stale_accepted"], full["stale_unobserved"]
    if accepted is None or unobserved is None:
        return None, 0
    if promise:
        return accepted, unobserved
    return accepted + unobserved, 0


@dataclass(frozen=True)
class Promise:
    """What a library's docs say about an outcome under some faults; ``limit`` is ``None`` for a caveat."""

    outcome: str
    faults: tuple[str, ...]
    limit: int | None
    quote: str
    doc: str

    def covers(self, fault: str) -> bool:
        return "*" in self.faults or fault in self.faults

    def as_json(self) -> dict[str, Any]:
        return {
            "outcome": self.outcome,
            "faults": list(self.faults),
            "max": self.limit,
            "quote": self.quote,
            "doc": self.doc,
        }


def parse_promises(
    entries: list[Mapping[str, Any]], outcomes: tuple[str, ...], faults: tuple[str, ...], *, caveat: bool, subject: str
) -> tuple[Promise, ...]:
    """A description's ``promises`` (or, with ``caveat``, its ``caveats``) as ``Promise``s, or a ``ValueError``
    naming the first entry's fault. The jobs workload and the schedule workload read their entries by this one
    rule and differ only in the ``outcomes`` they may name, the ``faults`` they take and the ``subject`` their
    messages say (``a promise``, ``a schedule promise``)."""
    return tuple(_promise(entry, outcomes, faults, caveat=caveat, subject=subject) for entry in entries)


def _promise(
    entry: Mapping[str, Any], outcomes: tuple[str, ...], faults: tuple[str, ...], *, caveat: bool, subject: str
) -> Promise:
    outcome = entry["outcome"]
    if outcome not in outcomes:
        raise ValueError(f"{subject}'s outcome must be one of {', '.join(outcomes)}, got {outcome!r}")
    named = tuple(entry["faults"])
    unknown = [fault for fault in named if fault != "*" and fault not in faults]
    if unknown:
        raise ValueError(f"{subject} names unknown faults {unknown}; known: {', '.join(faults)}")
    if not str(entry["quote"]).strip() or not str(entry["doc"]).strip():
        raise ValueError(f"{subject} about {outcome!r} must quote its doc and name it")
    return Promise(outcome, named, None if caveat else int(entry["max"]), str(entry["quote"]), str(entry["doc"]))
