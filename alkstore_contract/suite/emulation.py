"""What an adapter built that its engine lacks: the optional ``emulates`` member.

Part of the suite.

An adapter over a library that has no per-claim token check, no heartbeat or no
injectable clock may build one so the suite can drive the library at all. It
then says so, clause by clause: ``emulates`` maps a clause id to one line on
what the adapter built and why. The verdicts of those clauses are the
adapter's, not the library's, and the certificate, the safety profile, the
report and the matrix all mark them *emulated* (docs/ecosystem.md). A wire
engine says the same in its handshake's ``emulates`` (docs/wire-protocol.md).
"""

from __future__ import annotations

from collections.abc import Mapping

from alkstore_contract.suite.clauses import CLAUSES


def declared_emulation(adapter: object) -> dict[str, str]:
    """The adapter's ``emulates`` (empty when it has none); a malformed declaration raises, naming the rule."""
    declared = getattr(adapter, "emulates", None)
    if declared is None:
        return {}
    if not isinstance(declared, Mapping):
        raise ValueError(
            f"emulates={declared!r}: an adapter's emulates maps a clause id to what it built (a str), "
            f"not a {type(declared).__name__}"
        )
    found: dict[str, str] = {}
    for clause_id, why in declared.items():
        if clause_id not in CLAUSES:
            raise ValueError(
                f"emulates: {clause_id!r} is not a clause of docs/contract.md (known: {' '.join(CLAUSES)})"
            )
        if not isinstance(why, str) or not why.strip():
            raise ValueError(f"emulates[{clause_id!r}]={why!r}: say in a non-empty str what the adapter built and why")
        found[str(clause_id)] = why.strip()
    return found
