"""``alkstore-engine.toml``: how the suite starts an engine written in any language.

Part of the wire.

A manifest names a command, not a Python object, so the suite can certify an
engine with nothing of Python on its side (qpid-interop-test's shim manifests).
Paths in it are relative to the manifest's directory, so a manifest works from
any working directory::

    command = "node"
    args = ["src/main.js"]
    cwd = "."                 # optional, default: the manifest's directory
    env = { NODE_OPTIONS = "--no-warnings" }   # optional, added to the suite's environment
    op_timeout_s = 20         # optional: an op unanswered this long is a hang
    start_timeout_s = 20      # optional: the handshake must be answered within this
"""

from __future__ import annotations

import shutil
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

MANIFEST_SUFFIX = ".toml"
DEFAULT_OP_TIMEOUT_S = 20.0
DEFAULT_START_TIMEOUT_S = 20.0
_KEYS = {"command", "args", "cwd", "env", "op_timeout_s", "start_timeout_s"}


class ManifestError(ValueError):
    """A manifest that cannot be read or breaks a rule; the message names the file, the key and the rule."""


@dataclass(frozen=True)
class Manifest:
    """A parsed manifest: the argv to start, where, with what environment, and the two time bounds."""

    path: Path
    argv: tuple[str, ...]
    cwd: Path
    env: dict[str, str] = field(default_factory=dict)
    op_timeout_s: float = DEFAULT_OP_TIMEOUT_S
    start_timeout_s: float = DEFAULT_START_TIMEOUT_S

    @property
    def label(self) -> str:
        """A name for the engine before its handshake answered: the manifest's directory."""
        return self.path.parent.name or str(self.path)


def is_manifest_spec(spec: str) -> bool:
    """Whether ``--alkstore-engine`` names a manifest (a path ending ``.toml``) rather than a Python adapter."""
    return spec.endswith(MANIFEST_SUFFIX)


def _fail(path: Path, text: str) -> ManifestError:
    return ManifestError(f"engine manifest {path}: {text} (see docs/certify-reference.md, 'Any language')")


def _timeout(path: Path, data: dict[str, object], key: str, default: float) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 3600:
        raise _fail(path, f"{key}={value!r}: must be a number of seconds in (0, 3600]")
    return float(value)


def load_manifest(spec: str) -> Manifest:
    """The manifest at ``spec``; a missing file or a bad key raises ``ManifestError`` in one line."""
    path = Path(spec).expanduser().resolve()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise _fail(path, f"cannot be read ({exc.strerror or exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise _fail(path, f"is not TOML ({exc})") from None
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise _fail(path, f"unknown key {unknown[0]!r}; the keys are {', '.join(sorted(_KEYS))}")
    command, args, env = data.get("command"), data.get("args", []), data.get("env", {})
    if not isinstance(command, str) or not command:
        raise _fail(path, f"command={command!r}: must be a non-empty string")
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise _fail(path, f"args={args!r}: must be a list of strings")
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise _fail(path, f"env={env!r}: must be a table of strings")
    cwd_value = data.get("cwd", ".")
    if not isinstance(cwd_value, str):
        raise _fail(path, f"cwd={cwd_value!r}: must be a string")
    cwd = (path.parent / cwd_value).resolve()
    local = (cwd / command) if ("/" in command) else None
    executable = str(local) if local is not None else (shutil.which(command) or command)
    return Manifest(
        path=path,
        argv=(executable, *args),
        cwd=cwd,
        env=dict(env),
        op_timeout_s=_timeout(path, data, "op_timeout_s", DEFAULT_OP_TIMEOUT_S),
        start_timeout_s=_timeout(path, data, "start_timeout_s", DEFAULT_START_TIMEOUT_S),
    )
