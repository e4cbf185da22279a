"""The errors every engine raises, so callers can catch one family whatever engine runs.

Part of the contract.

``InvalidName`` and ``InvalidArgument`` are also ``ValueError`` and ``PayloadError``
is also ``TypeError`` so that code written against plain Python conventions keeps
working. Every message names the argument, the value and the rule it broke.
"""

from __future__ import annotations


class AlkstoreError(Exception):
    """Base class of every error an alkstore engine raises on purpose."""


class InvalidName(AlkstoreError, ValueError):
    """A queue name or worker id breaks a naming rule (contract S1, C6)."""


class InvalidArgument(AlkstoreError, ValueError):
    """An option, duration, instant, number or id breaks its rule (contract S2, E9)."""


class PayloadError(AlkstoreError, TypeError):
    """A payload is not a JSON value that round-trips equal (contract E8)."""


class StoreClosed(AlkstoreError):
    """The store was closed; nothing more is read or written through it (contract S3)."""


class StoreUnavailable(AlkstoreError):
    """The store could not reach its storage in time: the operation's outcome is unknown (contract N1, N3).

    Raised by a ``networked`` engine when the connection to its server is
    lost, refused or silent for longer than the bound the engine documents.
    The operation may or may not have taken effect (a commit can land just
    before the answer is lost), so callers treat it as indeterminate: an
    enqueue may have stored its job, an ack may have completed it. The same
    open store serves again once the server answers (N2).
    """


class HandleSpent(AlkstoreError):
    """``ack``/``retry``/``fail`` already returned on this handle (contract H4)."""
