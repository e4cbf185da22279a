"""``WireAdapter``: the ``EngineAdapter`` of an engine named by a manifest, in any language.

Part of the wire.

It starts the engine process when it is created (the handshake says who the
engine is and what it declares, which the suite asks before any row runs),
and starts a fresh one whenever the current one has ended — a crash, a hang, a
protocol violation — so one misbehaving op costs that op's clause, and the
next op that needs the engine gets a process that works. Each worker process
of the multi-process rows builds an adapter of its own from the same manifest,
so its stores live in engine processes of their own.
"""

from __future__ import annotations

import atexit
from typing import Any

from alkstore_contract.adapter import TIME_RESOLUTIONS_US, Capability
from alkstore_contract.clock import Clock
from alkstore_contract.surface import Store
from alkstore_contract.wire import PROTOCOL_VERSION
from alkstore_contract.wire.errors import EngineError
from alkstore_contract.wire.manifest import Manifest, load_manifest
from alkstore_contract.wire.process import EngineFailed, EngineProcess
from alkstore_contract.wire.surface import WireStore

_DESCRIBING = ("engine", "capabilities", "time_resolution_us", "networked", "emulates")
"""The handshake's fields every process of one engine must answer alike."""


def _one_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    if len(lines) <= 1:
        return lines[0] if lines else text
    return f"{lines[0]} … (stderr: {lines[-1]})"


class WireAdapter:
    """An engine behind ``alkstore-engine.toml``: every member of ``EngineAdapter`` is a message."""

    def __init__(self, manifest: Manifest, spec: str) -> None:
        self.manifest = manifest
        self.spec = spec
        self._process: EngineProcess | None = None
        self._processes: list[EngineProcess] = []
        self._hello: dict[str, Any] | None = None
        self._failure: str | None = None
        try:
            self.process()
        except EngineFailed as exc:
            self._failure = str(exc)
        atexit.register(self.shutdown)

    # -- who the engine is (from the first handshake)

    @property
    def name(self) -> str:
        return str(self._hello["engine"]["name"]) if self._hello else self.manifest.label

    @property
    def version(self) -> str:
        return str(self._hello["engine"]["version"]) if self._hello else "unknown"

    @property
    def language(self) -> str:
        return str(self._hello["engine"]["language"]) if self._hello else "unknown"

    @property
    def capabilities(self) -> frozenset[Capability]:
        return frozenset(Capability(c) for c in self._hello["capabilities"]) if self._hello else frozenset()

    @property
    def time_resolution_us(self) -> int:
        return int(self._hello["time_resolution_us"]) if self._hello else 1

    @property
    def emulates(self) -> dict[str, str]:
        """The handshake's optional ``emulates``: what the engine's adapter built that its library lacks."""
        declared = self._hello.get("emulates") if self._hello else None
        return {str(k): str(v) for k, v in (declared or {}).items()}

    @property
    def networked(self) -> dict[str, Any]:
        """The handshake's ``networked`` object (empty for an engine that is not networked)."""
        found: dict[str, Any] = self._hello.get("networked", {}) if self._hello else {}
        return found

    async def storage_version(self) -> str:
        storage = self._hello.get("storage") if self._hello else None
        return str(storage) if storage else f"{self.language}, protocol {PROTOCOL_VERSION}"

    # -- processes

    def process(self) -> EngineProcess:
        """The engine process that serves new requests: the current one while it lives, else a fresh one."""
        if self._process is not None and self._process.ended is None:
            return self._process
        process = EngineProcess(self.manifest)
        self._processes.append(process)
        try:
            hello = process.request_sync("hello", {"versions": [PROTOCOL_VERSION]}, self.manifest.start_timeout_s)
        except EngineError as exc:
            process.end("refused the handshake")
            raise EngineFailed(
                f"the engine offers no protocol version this suite speaks ({PROTOCOL_VERSION}): {exc}"
            ) from None
        except EngineFailed as exc:
            raise EngineFailed(f"the engine did not complete the handshake: {exc}") from None
        except Exception as exc:
            process.end("refused the handshake")
            raise EngineFailed(f"the engine refused the handshake: {type(exc).__name__}: {exc}") from None
        problem = self._hello_problem(hello)
        if problem is not None:
            process.end(problem)
            raise EngineFailed(f"the engine's handshake {problem}")
        self._hello = self._hello or hello
        self._process = process
        return process

    def _hello_problem(self, hello: dict[str, Any]) -> str | None:
        if hello["version"] != PROTOCOL_VERSION:
            return f"chose protocol version {hello['version']}, which the suite did not offer ([{PROTOCOL_VERSION}])"
        if hello["time_resolution_us"] not in TIME_RESOLUTIONS_US:
            return f"declares time_resolution_us={hello['time_resolution_us']}"
        if ("networked" in hello["capabilities"]) != ("networked" in hello):
            return "must give 'networked' (its bounds) exactly when it declares the networked capability"
        hook = hello.get("networked", {})
        if hook.get("server_crash_hook") and "restart_within_s" not in hook:
            return "declares server_crash_hook without restart_within_s, the bound of restart_server (P3)"
        if self._hello is not None:
            changed = [key for key in _DESCRIBING if self._hello.get(key) != hello.get(key)]
            if changed:
                return f"describes another engine than the first process did (it differs in {', '.join(changed)})"
        return None

    def shutdown(self) -> None:
        """End every process this adapter started (at exit, and in tests)."""
        for process in self._processes:
            process.close()

    async def _ask(self, op: str, fields: dict[str, Any]) -> Any:
        return await self.process().request(op, fields)

    # -- EngineAdapter

    async def unavailable_reason(self) -> str | None:
        if self._failure is not None:
            return _one_line(self._failure)
        reason: str | None = await self._ask("unavailable_reason", {})
        return reason

    async def create_location(self) -> str:
        location: str = await self._ask("create_location", {})
        return location

    async def open_store(self, location: str, *, clock: Clock | None = None, seed: int | None = None) -> Store:
        process = self.process()
        store_id = await process.request(
            "open_store", {"location": location, "clock": "system" if clock is None else "injected", "seed": seed}
        )
        return WireStore(process, store_id, clock)

    async def count_stored_jobs(self, location: str) -> int:
        count: int = await self._ask("count_stored_jobs", {"location": location})
        return count

    async def drop_location(self, location: str) -> None:
        await self._ask("drop_location", {"location": location})


class WireNetworkedAdapter(WireAdapter):
    """A wire engine that declares ``networked``: the ``NetworkedAdapter`` members, each a message."""

    def server_address(self, location: str) -> tuple[str, int]:
        address = self.process().request_sync("server_address", {"location": location})
        return str(address["host"]), int(address["port"])

    def location_via(self, location: str, host: str, port: int) -> str:
        via: str = self.process().request_sync("location_via", {"location": location, "host": host, "port": port})
        return via

    @property
    def op_timeout_s(self) -> float:
        return float(self._hello["networked"]["op_timeout_s"]) if self._hello else 0.0

    @property
    def reconnect_within_s(self) -> float:
        return float(self._hello["networked"]["reconnect_within_s"]) if self._hello else 0.0


class WireCrashableAdapter(WireNetworkedAdapter):
    """A networked wire engine that declares ``server_crash_hook``: ``CrashableServerAdapter``, each a message."""

    async def create_crashable_location(self) -> str:
        location: str = await self._ask("create_crashable_location", {})
        return location

    async def crash_server(self, location: str) -> None:
        await self._ask("crash_server", {"location": location})

    async def restart_server(self, location: str) -> None:
        await self._ask("restart_server", {"location": location})

    @property
    def restart_within_s(self) -> float:
        return float(self._hello["networked"].get("restart_within_s", 0.0)) if self._hello else 0.0


def load_wire_adapter(spec: str) -> WireAdapter:
    """The adapter of the manifest at ``spec``; a bad manifest raises ``ManifestError`` naming the file."""
    manifest = load_manifest(spec)
    adapter = WireAdapter(manifest, spec)
    if Capability.NETWORKED not in adapter.capabilities:
        return adapter
    crashable = bool(adapter.networked.get("server_crash_hook"))
    adapter.shutdown()
    return (WireCrashableAdapter if crashable else WireNetworkedAdapter)(manifest, spec)
