"""How a run's counts are held against what a library's docs say (docs/runtime-faults.md, "Promises").

A promise or caveat names one of ``lost``, ``twice``, ``concurrent``, ``stale``; the checker splits ``stale`` by
what the library did with the late completion (``stale_accepted``, ``stale_refused``, ``stale_unobserved``).
The rule, written once here so the command, the report and the table agree:

- a **promise** about ``stale`` is a fencing claim (the library refuses a completion whose lease or lock has
  gone to another worker). It is held against ``stale_accepted``; a refused one is the fence working. An
  unobserved one can neither break nor keep it: such a run leaves the promise **not judged**, which the command
  treats as it treats a fault that reached no job (a check that did not run is no pass);
- a **caveat** about ``stale`` (the docs say a late completion may be taken, and claim no fence) counts the
  accepted and the unobserved ones: where nothing refuses a late completion, one not seen refused was taken;
- every other outcome is its own count.

Reports written before the split (their counts have ``stale``, no ack records) read as all unobserved.
"""

from __future__ import annotations

from collections.abc import Mapping

from alkstore_faults.checker import OUTCOMES


def normalised(counts: Mapping[str, int | None]) -> dict[str, int | None]:
    """``counts`` with every outcome of ``checker.OUTCOMES``: an older report's ``stale`` is ``stale_unobserved``."""
    if "stale" in counts and "stale_unobserved" not in counts:
        stale = counts["stale"]
        zero = None if stale is None else 0
        upgraded = {**counts, "stale_accepted": zero, "stale_refused": zero, "stale_unobserved": stale}
        return {outcome: upgraded[outcome] for outcome in OUTCOMES}
    return {outcome: counts[outcome] for outcome in OUTCOMES}


def judged(outcome: str, counts: Mapping[str, int | None], *, promise: bool) -> tuple[int | None, int]:
    """The count a promise (``promise=True``) or caveat about ``outcome`` is held against in one run, and how many
    of that run's late completions leave it not judged (non-zero only for a promise about ``stale``)."""
    full = normalised(counts)
    if outcome != "stale":
        return full[outcome], 0
    accepted, unobserved = full["stale_accepted"], full["stale_unobserved"]
    if accepted is None or unobserved is None:
        return None, 0
    if promise:
        return accepted, unobserved
    return accepted + unobserved, 0
