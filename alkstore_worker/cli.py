"""``alkstore worker MODULE:APP`` and ``alkstore jobs dead|retry``: the runtime's commands (docs/worker.md).

Exit codes: 0 after a graceful stop (a signal, or ``--drain`` with the
queues empty); 1 when a second signal cut the stop short, or the store cannot
be reached; 2 for a usage error (a bad flag value, an app that cannot be
loaded, periodic tasks on an engine without ``unique_keys``); under
``--processes``, a child's death the parent could not restart from
(``alkstore_worker.supervisor``). Every error is one line on stderr
saying which argument or store, what was wrong, and what to do; no traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from collections.abc import Coroutine
from typing import Any, NoReturn

from alkstore_contract.errors import AlkstoreError
from alkstore_contract.types import JobId
from alkstore_worker import logs
from alkstore_worker.app import App
from alkstore_worker.envelope import Envelope, EnvelopeError, open_envelope
from alkstore_worker.events import emit
from alkstore_worker.loading import AppNotFound, load_app
from alkstore_worker.metrics import Metrics, missing_dependency
from alkstore_worker.periodic import PeriodicUnsupported
from alkstore_worker.runtime import Worker, WorkerOptions
from alkstore_worker.supervisor import PARENT_ENV, SLOT_ENV, RestartPolicy, supervise

DEFAULT_PROGRESS_S = 5.0
DEFAULT_DEAD_LIMIT = 50
RESTARTS = RestartPolicy()


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``alkstore: ...; see --help``) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        command = self.prog.removeprefix("alkstore").strip()
        where = f"{command}: " if command else ""
        sys.stderr.write(f"alkstore: {where}{message}; see '{self.prog} --help'\n")
        raise SystemExit(2)


def _count(text: str) -> int:
    """An ``int >= 1`` flag value (``--limit``): 0 or a negative number is refused, not read as "none"."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an int") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value}: must be an int >= 1")
    return value


def _port(text: str) -> int:
    """A TCP port to listen on: 0 (any free one, logged in ``metrics_serving``) to 65535."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an int") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value}: must be a port, 0 to 65535")
    return value


def _parser() -> argparse.ArgumentParser:
    top = OneLineParser(prog="alkstore", description="Run an app's tasks, or look at its dead letters.")
    commands = top.add_subparsers(dest="command", required=True)
    worker = commands.add_parser("worker", help="run workers for an app's tasks until SIGTERM/SIGINT")
    worker.add_argument("app", metavar="MODULE:APP", help="the App object, e.g. myproject.tasks:app")
    worker.add_argument(
        "-q", "--queue", action="append", dest="queues", metavar="NAME", help="a queue to serve (repeatable)"
    )
    worker.add_argument("-c", "--concurrency", type=int, default=10, metavar="N", help="jobs at once per process")
    worker.add_argument("-p", "--processes", type=int, default=1, metavar="N", help="worker processes (default 1)")
    worker.add_argument("--grace", type=float, default=30.0, metavar="S", help="seconds a stop lets jobs finish")
    worker.add_argument(
        "--sweep-interval", type=float, default=60.0, metavar="S", help="seconds between sweeps (0: never)"
    )
    worker.add_argument("--poll-max", type=float, default=None, metavar="S", help="longest idle wait between claims")
    worker.add_argument("--max-batch", type=int, default=100, metavar="N", help="largest batch claim")
    worker.add_argument(
        "--prefetch", type=int, default=None, metavar="N", help="jobs claimed ahead of a free slot (default: -c)"
    )
    worker.add_argument(
        "--progress",
        nargs="?",
        type=float,
        const=DEFAULT_PROGRESS_S,
        default=None,
        metavar="S",
        help=f"the counters every S seconds (default {DEFAULT_PROGRESS_S:g}): a line on a terminal, else a "
        "'progress' log event",
    )
    worker.add_argument("--drain", action="store_true", help="exit 0 once no job is claimable and none runs")
    worker.add_argument("--log-level", default="INFO", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    worker.add_argument(
        "--metrics-port",
        type=_port,
        default=None,
        metavar="PORT",
        help="serve Prometheus metrics on PORT (child k of --processes on PORT+k); needs alkstore[metrics]",
    )
    worker.add_argument(
        "--metrics-address", default="127.0.0.1", metavar="ADDR", help="where --metrics-port listens (127.0.0.1)"
    )
    restarts: list[tuple[str, type[int] | type[float], float, str, str]] = [
        (
            "--max-restarts",
            int,
            RESTARTS.max_restarts,
            "N",
            "restarts of dead children allowed within --restart-window; one more and the parent stops and exits "
            "with the death's status",
        ),
        ("--restart-window", float, RESTARTS.window_s, "S", "the seconds the restart budget counts in"),
        (
            "--restart-backoff",
            float,
            RESTARTS.backoff_s,
            "S",
            f"the first restart's delay, doubled per restart in the window up to {RESTARTS.backoff_max_s:g} s",
        ),
    ]
    for flag, kind, default, metavar, text in restarts:
        worker.add_argument(
            flag, type=kind, default=default, metavar=metavar, help=f"--processes: {text} (default {default:g})"
        )
    jobs = commands.add_parser("jobs", help="dead letters: list them, retry one")
    actions = jobs.add_subparsers(dest="action", required=True)
    dead = actions.add_parser("dead", help="list dead jobs, newest first")
    dead.add_argument("app", metavar="MODULE:APP")
    dead.add_argument("-q", "--queue", default=None, metavar="NAME")
    dead.add_argument(
        "--limit",
        type=_count,
        default=DEFAULT_DEAD_LIMIT,
        metavar="N",
        help=f"list at most N (an int >= 1, default {DEFAULT_DEAD_LIMIT})",
    )
    retry = actions.add_parser("retry", help="enqueue a dead job again with fresh attempts (a new id)")
    retry.add_argument("app", metavar="MODULE:APP")
    retry.add_argument("id", help="the dead job's id")
    retry.add_argument("-q", "--queue", default=None, metavar="NAME", help="its queue (default: each of the app's)")
    return top


def _out(line: str) -> None:
    sys.stdout.write(line + "\n")


def _usage(message: str) -> int:
    sys.stderr.write(f"alkstore: {message}\n")
    return 2


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``alkstore worker`` / ``alkstore jobs`` (and ``python -m alkstore_worker``)."""
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 2
    try:
        app = load_app(args.app)
    except AppNotFound as exc:
        return _usage(str(exc))
    if args.command == "worker":
        return _worker(args, app)
    if args.action == "dead":
        return _reach(app, _dead(app, args.queue, args.limit))
    return _reach(app, _retry(app, args.id, args.queue))


def _reach(app: App, command: Coroutine[Any, Any, int]) -> int:
    """Run a ``jobs`` command; a store that cannot be reached is one line and exit status 1."""
    try:
        return asyncio.run(command)
    except app.source.unreachable_errors() as exc:
        return _unreachable(app, exc)


def _unreachable(app: App, exc: BaseException) -> int:
    detail = f"{type(exc).__name__}: {exc}".splitlines()[0] if str(exc) else type(exc).__name__
    sys.stderr.write(
        f"alkstore: cannot reach {app.source.description} ({detail}); check that it runs and that the app's "
        "source names it\n"
    )
    return 1


def _worker(args: argparse.Namespace, app: App) -> int:
    if isinstance(args.processes, bool) or args.processes < 1:
        return _usage(f"--processes={args.processes}: must be an int >= 1")
    if args.metrics_port is not None and (missing := missing_dependency()) is not None:
        return _usage(missing)
    options = WorkerOptions(
        queues=args.queues,
        concurrency=args.concurrency,
        grace_s=args.grace,
        sweep_interval_s=args.sweep_interval,
        max_batch=args.max_batch,
        prefetch=args.prefetch,
        poll_max_s=args.poll_max,
        stop_when_idle=args.drain,
        progress_s=args.progress,
    )
    try:
        worker = Worker(app, options)
        policy = RestartPolicy(args.max_restarts, args.restart_window, args.restart_backoff)
    except AlkstoreError as exc:
        return _usage(str(exc))
    logs.configure(args.log_level)
    if args.processes > 1:
        if app.source.one_process:
            return _usage(f"--processes={args.processes}: {app.source.description} lives in one process; use 1")
        return supervise(_child_args(args), args.processes, policy)
    metrics: Metrics | None = None
    if args.metrics_port is not None:
        metrics = Metrics(worker.counters)
        try:
            metrics.serve(args.metrics_port + int(os.environ.get(SLOT_ENV, "0")), args.metrics_address)
        except OSError as exc:
            return _usage(f"--metrics-port={args.metrics_port}: cannot listen on {args.metrics_address}: {exc}")
    try:
        return asyncio.run(_serve(worker))
    finally:
        if metrics is not None:
            metrics.close()


def _child_args(args: argparse.Namespace) -> list[str]:
    """The command line each child of ``--processes`` gets: the parent's settings, spelled out (one process each)."""
    child = [args.app, "--concurrency", str(args.concurrency), "--grace", repr(args.grace)]
    child += ["--sweep-interval", repr(args.sweep_interval), "--max-batch", str(args.max_batch)]
    child += ["--log-level", args.log_level]
    for queue in args.queues or []:
        child += ["--queue", queue]
    if args.poll_max is not None:
        child += ["--poll-max", repr(args.poll_max)]
    if args.prefetch is not None:
        child += ["--prefetch", str(args.prefetch)]
    if args.progress is not None:
        child += ["--progress", repr(args.progress)]
    if args.drain:
        child.append("--drain")
    if args.metrics_port is not None:
        child += ["--metrics-port", str(args.metrics_port), "--metrics-address", args.metrics_address]
    return child


async def _serve(worker: Worker) -> int:
    loop = asyncio.get_running_loop()
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals > 1:
            emit("second_signal", logging.WARNING, exiting="now", unfinished="return after their lease")
            logging.shutdown()
            os._exit(1)
        worker.stop()

    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, on_signal)
    watchdog = asyncio.create_task(_watch_parent(worker))
    try:
        await worker.run()
    except PeriodicUnsupported as exc:
        sys.stderr.write(f"alkstore: {exc}\n")
        return 2
    except worker.app.source.unreachable_errors() as exc:
        emit(
            "store_unreachable",
            logging.ERROR,
            store=worker.app.source.description,
            error={"type": type(exc).__name__, "message": str(exc)},
            hint="check that the store runs and that the app's source names it",
        )
        return 1
    finally:
        watchdog.cancel()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
    return 0


async def _watch_parent(worker: Worker) -> None:
    """Under ``--processes``: stop gracefully if the supervising parent died (our parent pid changed)."""
    parent = os.environ.get(PARENT_ENV)
    if parent is None:
        return
    while os.getppid() == int(parent):  # noqa: ASYNC110 - nothing signals a parent's death; a pid check polls it
        await asyncio.sleep(1.0)
    worker.stop()


async def _dead(app: App, queue: str | None, limit: int) -> int:
    try:
        dead = await app.source.dead_jobs(queue, limit)
    except NotImplementedError as exc:
        return _usage(str(exc))
    if not dead:
        _out("no dead jobs")
        return 0
    _out("id\tqueue\tattempts\tdied_at\tlast_error")
    for job in dead:
        _out(f"{job.id}\t{job.queue}\t{job.attempts}\t{job.died_at}\t{job.last_error}")
    return 0


async def _retry(app: App, raw_id: str, queue: str | None) -> int:
    job_id: JobId = int(raw_id) if raw_id.lstrip("-").isdigit() else raw_id
    names = [queue] if queue is not None else app.queues()
    store = await app.source.open()
    try:
        for name in names:
            handle = store.queue(name)
            job = await handle.get_job(job_id)
            if job is None:
                continue
            if job.state.value != "dead":
                return _usage(f"id={raw_id}: job {job_id} of queue {name!r} is {job.state.value}, not dead")
            try:
                envelope = open_envelope(job.payload)
            except EnvelopeError as exc:
                return _usage(f"id={raw_id}: {exc}")
            new_id = await handle.enqueue(
                Envelope(envelope.task, envelope.payload, requeued_from=job.id).encode(),
                max_attempts=job.max_attempts,
                priority=job.priority,
            )
            await handle.cancel(job.id)
            _out(f"dead job {job.id} enqueued again as job {new_id} on queue {name!r}")
            return 0
    finally:
        await store.close()
    return _usage(f"id={raw_id}: no job of that id in queue(s) {', '.join(map(repr, names))}")
