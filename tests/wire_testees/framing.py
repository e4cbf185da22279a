"""A test fixture, not an engine: it answers ``hello`` and ``unavailable_reason``, framing its replies as told.

``tests/test_wire_transport.py`` starts it to show that the suite's reading of an engine's stdout
takes any framing the protocol allows (docs/wire-protocol.md, "Framing"), and whatever an engine
writes to stderr. ``ALKSTORE_FRAMING`` says how each ``unavailable_reason`` is answered (its reason is ``#`` and the
request's id, so a test can tell whose reply is whose):

- ``split``: the reply line in two writes, 50 ms apart;
- ``last_without_newline``: the reply without its newline, then the process exits 0;
- ``long``: a reason of ``ALKSTORE_FRAMING_CHARS`` characters (one line far longer than a pipe holds);
- ``reversed``: two requests are read, then answered last first;
- ``noisy``: ``ALKSTORE_FRAMING_CHARS`` characters written to stderr before the reply;
- ``silent``: never (a hang);
- ``plain``: one line, at once.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

MODE = os.environ.get("ALKSTORE_FRAMING", "plain")
CHARS = int(os.environ.get("ALKSTORE_FRAMING_CHARS", "0"))
HELLO = {
    "version": 1,
    "engine": {"name": "framing", "version": "0", "language": "python"},
    "capabilities": [],
    "time_resolution_us": 1,
}


def reply(request: dict[str, Any]) -> bytes:
    result = HELLO if request["type"] == "hello" else ("x" * CHARS if MODE == "long" else f"#{request['id']}")
    return json.dumps({"in_reply_to": request["id"], "type": "ok", "result": result}).encode() + b"\n"


def write(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def main() -> None:
    waiting: list[bytes] = []
    for line in sys.stdin.buffer:
        request = json.loads(line)
        answer = reply(request)
        if request["type"] == "hello" or MODE in ("plain", "long"):
            write(answer)
        elif MODE == "split":
            write(answer[:10])
            time.sleep(0.05)
            write(answer[10:])
        elif MODE == "last_without_newline":
            write(answer.rstrip(b"\n"))
            return
        elif MODE == "noisy":
            sys.stderr.write("n" * CHARS + "\n")
            sys.stderr.flush()
            write(answer)
        elif MODE == "reversed":
            waiting.append(answer)
            if len(waiting) == 2:
                write(b"".join(reversed(waiting)))
                waiting.clear()


if __name__ == "__main__":
    main()
