"""Compares Box with LangBot's own Python Box runtime, both driven by LangBot's unchanged client.

Run by bench/langbot-compare with the Python that scripts/python-client sets up (the SDK is on its
path). It starts, on free loopback ports, LangBot's runtime (`lbp box`, from the SDK) and Box
(`box serve`), one pair of backends at a time:

  namespace: the Python runtime's nsjail backend, Box's bwrap backend (its default) and Box's nsjail
  docker:    both runtimes' docker backend, on the same image

and connects to each the way LangBot's BoxRuntimeConnector does (Handler, __ping, box_init), then
times through ActionRPCBoxClient, interleaved sample by sample (A, B, A, B, ...) so that drift on
a shared machine lands on both:

  create + first exec   `true` in a session id never used before (the runtime creates the
                        session for it, as for an agent's first command); removed afterwards,
                        then 50 ms before the next runtime's sample, so that what a delete leaves
                        to the background (Box's pool refill, a jail's teardown) does not land on
                        the next runtime's create on a 2-core machine
  warm exec             `true` in a session that already exists
  ten concurrent execs  wall time of ten `true`, issued at once, each in its own existing session
  health round trip     a health action (no sandbox): the client's and the transport's own cost,
                        paid by both runtimes on every row (no target; shown for the ratios)

Before anything is timed, each Box server serves --jit-warmup warm execs and a tenth as many
creates, untimed: a JVM whose JIT has served few requests is slower than one in service (the
Python runtime has no JIT to warm). After the rows, each Box server's warm exec is also timed over
its REST API with a plain http.client on the same session shape's exec (`true`), which gives what
the action-RPC path adds to the same exec (target: at most 1 ms).

It prints one table per pair (p50 per runtime, ratio Box/Python, PASS when <= 0.5), optionally
writes it as Markdown, and removes what it created: the servers (by their process ids), their
sessions, and any container whose session label carries this run's tag.

The Python runtime is started through `--serve-python` of this same script, which runs the SDK's
own server entry point with two changes that only confine it to what this run owns (neither is on
the timed path): its nsjail session directories go to this run's temporary directory instead of
the shared /tmp/langbot-box-nsjail, and its start-up sweep of "orphaned" containers, which removes
every container labelled langbot.box=true that is not its own (Box's and other runs' included), is
skipped.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import platform
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

# LangBot's connector and default `box` section, shared with the interop test's driver.
sys.path.insert(
    0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "box-cli", "src", "test",
                    "resources", "langbot"))

INSTANCE = "langbot-compare-instance"
TARGET_RATIO = 0.5
# Seconds after each create row sample (its delete included) before the next runtime's sample.
CREATE_PAUSE = 0.05
DOCKER_IMAGE = "box-debian:bookworm"
ROWS = ("create + first exec", "warm exec", "ten concurrent execs")
# Measured beside them, without a target: the client's own round trip through each runtime (a
# health action, no sandbox), what every row above pays on both sides.
INFO_ROWS = ("health round trip",)
CONCURRENCY = 10
RPC_COST_TARGET_MS = 1.0

log = logging.getLogger("langbot-compare")


# -- the Python runtime's server, run as a child of this script ------------------------------------


def serve_python(port: int, nsjail_dir: str) -> None:
    """Runs LangBot's `lbp box` server on 127.0.0.1:port, confined to what this run owns."""
    from langbot_plugin.box import backend as backend_module
    from langbot_plugin.box import nsjail_backend
    from langbot_plugin.box import server

    # The default base directory (/tmp/langbot-box-nsjail) is shared by every Python runtime on the
    # machine, and the runtime deletes at start-up every session directory there that is not its
    # own; use a private one.
    original_init = nsjail_backend.NsjailBackend.__init__

    def private_init(self, logger, nsjail_bin="nsjail", base_dir=nsjail_dir):
        original_init(self, logger, nsjail_bin=nsjail_bin, base_dir=base_dir)

    nsjail_backend.NsjailBackend.__init__ = private_init

    # The docker backend's start-up sweep removes every langbot.box=true container of another
    # instance: on a shared engine that includes Box's containers and other runs'. Not timed.
    async def no_sweep(self, current_instance_id=""):
        return None

    backend_module.CLISandboxBackend.cleanup_orphaned_containers = no_sweep

    # The same namespace the `lbp box` subcommand passes (langbot_plugin.cli).
    server.main(argparse.Namespace(host="127.0.0.1", ws_control_port=port, stdio_control=False))


# -- servers ----------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """One runtime process on a loopback port; stopped by its own process id (its group)."""

    def __init__(self, label: str, backend: str, command: list[str], env: dict, log_path: str):
        self.label = label
        self.backend = backend
        self.command = command
        self.env = env
        self.log_path = log_path
        self.process: subprocess.Popen | None = None
        self.port = int(command[command.index("--port") + 1]) if "--port" in command else 0

    def start(self) -> None:
        with open(self.log_path, "ab") as out:
            # A session of its own, so that stopping it reaches the sandboxes it spawned too.
            self.process = subprocess.Popen(
                self.command, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL, start_new_session=True,
            )

    async def wait_listening(self, timeout: float = 90.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.label} exited with {self.process.returncode}: "
                                   + self.log_tail())
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
                writer.close()
                return
            await asyncio.sleep(0.2)
        raise RuntimeError(f"{self.label} did not listen on {self.port}: " + self.log_tail())

    def log_tail(self, lines: int = 8) -> str:
        with contextlib.suppress(OSError), open(self.log_path, errors="replace") as f:
            return " | ".join(line.strip() for line in f.readlines()[-lines:])
        return ""

    def stop(self) -> None:
        """SIGTERM (both runtimes remove their sessions on it), SIGKILL after 30 s."""
        if self.process is None or self.process.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()


# -- the client, connected as LangBot connects ------------------------------------------------------


def langbot_box_config(host_root: str) -> dict:
    """LangBot's default `box` section for box_init, minus `runtime` and `backend` (each server
    keeps the backend it was started with)."""
    from langbot_connector import default_config

    config = default_config(host_root)
    del config["backend"]
    return config


class Runtime:
    """A connected runtime: the upstream ActionRPCBoxClient over its /rpc/ws."""

    def __init__(self, server: Server, token: str, host_root: str, image: str | None) -> None:
        from langbot_connector import Connector
        from langbot_plugin.box.security import BOX_CONTROL_TOKEN_HEADER, BOX_INSTANCE_HEADER

        self.server = server
        self.label = server.label
        self.host_root = host_root
        self.image = image
        self.connector = Connector(
            langbot_box_config(host_root),
            {BOX_INSTANCE_HEADER: INSTANCE, BOX_CONTROL_TOKEN_HEADER: token},
            log,
        )
        self.client = self.connector.client
        self.context = self.workspace(0)

    async def connect(self) -> None:
        """Like LangBot's BoxRuntimeConnector: a Handler on the connection, __ping, box_init."""
        await self.connector.connect_ws(f"ws://127.0.0.1:{self.server.port}/rpc/ws")

    @staticmethod
    def workspace(number: int):
        """The context of LangBot Workspace `number` of this instance (a tenant of its own)."""
        from langbot_plugin.entities.io.context import ActionContext

        return ActionContext(instance_uuid=INSTANCE, workspace_uuid=f"langbot-compare-ws{number}",
                             placement_generation=1)

    async def backend_available(self) -> tuple[bool, str]:
        from langbot_plugin.box.actions import LangBotToBoxAction

        data = await self.connector.handler.call_action(LangBotToBoxAction.HEALTH, {})
        return bool(data.get("available")), json.dumps(data)[:300]

    def spec(self, session_id: str, context):
        """`true` in session_id, with the Workspace's directory mounted at /workspace as LangBot
        mounts it (without one, the Python docker backend's `mkdir -p /workspace` fails on the
        read-only root)."""
        from langbot_plugin.box.models import BoxSpec
        from langbot_plugin.box.tenancy import box_namespace

        # LangBot's path for a Workspace's execs: <default_workspace>/tenants/<namespace>. The
        # runtime creates it (Box with the ownership its sandbox user needs).
        host_path = os.path.join(self.host_root, "default", "tenants", box_namespace(context))
        extra = {"image": self.image} if self.image else {}
        return BoxSpec(session_id=session_id, cmd="true", host_path=host_path, **extra)

    async def exec_true(self, session_id: str, context=None) -> None:
        context = context or self.context
        result = await self.client.execute(self.spec(session_id, context), context)
        if result.exit_code != 0:
            raise RuntimeError(f"{self.label}: `true` in {session_id} exited {result.exit_code}: "
                               f"{result.stderr[:200]}")

    async def create_session(self, session_id: str, context=None) -> None:
        context = context or self.context
        await self.client.create_session(self.spec(session_id, context), context)

    async def delete_session(self, session_id: str, context=None) -> None:
        with contextlib.suppress(Exception):
            await self.client.delete_session(session_id, context or self.context)

    async def close(self) -> None:
        await self.connector.close()


# -- the rows ---------------------------------------------------------------------------------------


class Row:
    """One timed operation; `sample` returns milliseconds, `setup`/`teardown` are not timed."""

    def __init__(self, runtime: Runtime, tag: str) -> None:
        self.runtime = runtime
        self.tag = tag
        self.count = 0

    def fresh_id(self, kind: str) -> str:
        self.count += 1
        return f"{self.tag}-{kind}{self.count}"


class CreateRow(Row):
    name = ROWS[0]

    async def setup(self) -> None:
        pass

    async def sample(self) -> float:
        session_id = self.fresh_id("c")
        start = time.perf_counter()
        await self.runtime.exec_true(session_id)
        elapsed = (time.perf_counter() - start) * 1000
        await self.runtime.delete_session(session_id)
        # What a delete leaves to do in the background (Box's pool refill) ends before the next
        # runtime's create is timed, as between a person's sessions: the client-side measure's rule.
        await asyncio.sleep(CREATE_PAUSE)
        return elapsed

    async def teardown(self) -> None:
        pass


class WarmRow(Row):
    name = ROWS[1]

    async def setup(self) -> None:
        self.session_id = self.fresh_id("w")
        await self.runtime.create_session(self.session_id)
        await self.runtime.exec_true(self.session_id)

    async def sample(self) -> float:
        start = time.perf_counter()
        await self.runtime.exec_true(self.session_id)
        return (time.perf_counter() - start) * 1000

    async def teardown(self) -> None:
        await self.runtime.delete_session(self.session_id)


class ConcurrentRow(Row):
    name = ROWS[2]

    async def setup(self) -> None:
        # One session per exec, each in a Workspace of its own (ten tenants at once). The Python
        # runtime runs one exec at a time per session (its session lock), and with its default
        # blocking-executor limits (LANGBOT_BLOCKING_EXECUTOR_*: 8 workers, at most 4 in flight
        # per Workspace) it refuses a fifth simultaneous exec of one Workspace with
        # BlockingWorkCapacityError; ten sessions of one Workspace would measure neither.
        self.targets = [(self.fresh_id("p"), Runtime.workspace(k + 1)) for k in range(CONCURRENCY)]
        for session_id, context in self.targets:
            await self.runtime.create_session(session_id, context)
            await self.runtime.exec_true(session_id, context)

    async def sample(self) -> float:
        start = time.perf_counter()
        await asyncio.gather(*(self.runtime.exec_true(s, c) for s, c in self.targets))
        return (time.perf_counter() - start) * 1000

    async def teardown(self) -> None:
        for session_id, context in self.targets:
            await self.runtime.delete_session(session_id, context)


class HealthRow(Row):
    name = INFO_ROWS[0]

    async def setup(self) -> None:
        pass

    async def sample(self) -> float:
        start = time.perf_counter()
        await self.runtime.backend_available()
        return (time.perf_counter() - start) * 1000

    async def teardown(self) -> None:
        pass


async def measure(runtimes: list[Runtime], iterations: int, warmup: int, tag: str) -> dict:
    """{row: {label: [ms, ...]}}: each row's samples, taken in rounds over all runtimes, the order
    rotating every round so that no runtime always goes first."""
    results: dict[str, dict[str, list[float]]] = {}
    for row_class in (CreateRow, WarmRow, ConcurrentRow, HealthRow):
        rows = [row_class(rt, f"{tag}{i}") for i, rt in enumerate(runtimes)]
        for row in rows:
            await row.setup()
        samples = {row.runtime.label: [] for row in rows}
        for i in range(warmup + iterations):
            order = rows[i % len(rows):] + rows[:i % len(rows)]
            for row in order:
                ms = await row.sample()
                if i >= warmup:
                    samples[row.runtime.label].append(ms)
        for row in rows:
            await row.teardown()
        results[row_class.name] = samples
        summary = ", ".join(f"{k} {statistics.median(v):.1f} ms" for k, v in samples.items())
        print(f"  {row_class.name}: {summary}", file=sys.stderr, flush=True)
    return results


async def jit_warmup(runtime: Runtime, execs: int, tag: str) -> None:
    """Untimed: `execs` warm execs in one session and a tenth as many creates, each removed."""
    session_id = f"{tag}-jit"
    try:
        for _ in range(execs):
            await runtime.exec_true(session_id)
    finally:
        await runtime.delete_session(session_id)
    for k in range(execs // 10):
        try:
            await runtime.exec_true(f"{tag}-jitc{k}")
        finally:
            await runtime.delete_session(f"{tag}-jitc{k}")


def rest_warm_exec(server: Server, token: str, iterations: int, warmup: int, tag: str) -> list[float]:
    """The warm exec of `true` over Box's REST API, with a plain http.client on one kept-alive
    connection: what the same exec costs without the action-RPC path."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    headers = {"Authorization": "Bearer " + token, "Content-Type": "application/json"}
    session_id = f"{tag}-rest"
    body = json.dumps({"cmd": "true"})

    def exec_true() -> None:
        connection.request("POST", f"/v1/sessions/{session_id}/exec", body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read()
        if response.status != 200 or json.loads(answer).get("exit_code") != 0:
            raise RuntimeError(f"{server.label}: REST exec answered {response.status}: {answer[:200]}")

    samples = []
    try:
        for i in range(warmup + iterations):
            start = time.perf_counter()
            exec_true()
            if i >= warmup:
                samples.append((time.perf_counter() - start) * 1000)
    finally:
        with contextlib.suppress(Exception):
            connection.request("DELETE", f"/v1/sessions/{session_id}", headers=headers)
            connection.getresponse().read()
        connection.close()
    return samples


# -- a pair of backends -----------------------------------------------------------------------------


class Pair:
    def __init__(self, name: str, python_backend: str, box_backends: list[str], image: str | None):
        self.name = name
        self.python_backend = python_backend
        self.box_backends = box_backends
        self.image = image


PAIRS = {
    "namespace": Pair("namespace", "nsjail", ["bwrap", "nsjail"], None),
    "docker": Pair("docker", "docker", ["docker"], DOCKER_IMAGE),
}


def python_label(pair: Pair) -> str:
    return f"Python {pair.python_backend}"


def box_label(backend: str) -> str:
    return f"Box {backend}"


async def run_pair(pair: Pair, args, workdir: str, tag: str) -> dict:
    """Starts the pair's servers, measures, stops them. Returns {"skipped": why} or the results."""
    token = secrets.token_urlsafe(48)
    servers: list[Server] = []
    runtimes: list[Runtime] = []
    pair_dir = tempfile.mkdtemp(prefix=f"{pair.name}-", dir=workdir)
    base_env = {k: v for k, v in os.environ.items() if not k.startswith("LANGBOT_BOX_")}
    base_env["LANGBOT_BOX_CONTROL_TOKEN"] = token

    # LangBot's runtime: the `box` section (backend chosen) comes from LANGBOT_BOX_CONFIG as when
    # LangBot spawns it.
    py_root = os.path.join(pair_dir, "python-data")
    py_env = dict(base_env)
    py_env["LANGBOT_BOX_CONFIG"] = json.dumps(
        {**langbot_box_config(py_root), "backend": pair.python_backend})
    py_port = free_port()
    servers.append(Server(
        python_label(pair), pair.python_backend,
        [args.python, os.path.abspath(__file__), "--serve-python", "--port", str(py_port),
         "--nsjail-dir", os.path.join(pair_dir, "python-nsjail")],
        py_env, os.path.join(pair_dir, "python.log")))
    for backend in pair.box_backends:
        data_dir = os.path.join(pair_dir, f"box-{backend}")
        command = [args.java, "-jar", args.box_jar, "serve", "--host", "127.0.0.1",
                   "--port", str(free_port()), "--backend", backend, "--data-dir", data_dir]
        if pair.image:
            command += ["--image", pair.image]
        servers.append(Server(box_label(backend), backend, command, dict(base_env),
                              os.path.join(pair_dir, f"box-{backend}.log")))
    try:
        for server in servers:
            server.start()
        for server in servers:
            await server.wait_listening()
        for server in servers:
            root = os.path.join(pair_dir, f"{server.label.replace(' ', '-')}-root")
            os.makedirs(root, exist_ok=True)
            runtime = Runtime(server, token, root, pair.image)
            await runtime.connect()
            runtimes.append(runtime)
            available, detail = await runtime.backend_available()
            if not available:
                why = f"{server.label}: backend not available: {detail}; log: {server.log_tail()}"
                return {"skipped": why}
            # One exec proves the backend really runs here before anything is timed.
            try:
                await runtime.exec_true(f"{tag}-probe")
            finally:
                await runtime.delete_session(f"{tag}-probe")
        for runtime in runtimes:
            if runtime.label.startswith("Box") and args.jit_warmup > 0:
                print(f"{pair.name}: warming up {runtime.label}'s JIT: {args.jit_warmup} warm execs,"
                      f" {args.jit_warmup // 10} creates", file=sys.stderr, flush=True)
                await jit_warmup(runtime, args.jit_warmup, tag)
        print(f"{pair.name}: measuring {', '.join(s.label for s in servers)} "
              f"({args.iterations} iterations, {args.warmup} warm-up)", file=sys.stderr, flush=True)
        results = await measure(runtimes, args.iterations, args.warmup, tag)
        rest = {}
        for server in servers:
            if server.label.startswith("Box"):
                rest[server.label] = rest_warm_exec(server, token, args.iterations, args.warmup, tag)
        return {"results": results, "rest": rest, "notes": backend_notes(servers)}
    except Exception as exc:  # noqa: BLE001 - reported as why the pair has no numbers
        logs = "; ".join(f"{s.label} log: {s.log_tail(4)}" for s in servers)
        return {"skipped": f"{type(exc).__name__}: {exc}; {logs}"}
    finally:
        for runtime in runtimes:
            await runtime.close()
        for server in servers:
            server.stop()
        if pair.name == "docker":
            remove_containers(tag)


def backend_notes(servers: list[Server]) -> list[str]:
    """What the runtimes' logs say about limits they could not apply here (it changes the work each
    exec does, so it belongs beside the numbers)."""
    notes = []
    for server in servers:
        with contextlib.suppress(OSError), open(server.log_path, errors="replace") as f:
            text = f.read()
        if "cgroup v2 limits unavailable" in text:
            notes.append(f"{server.label}: no usable cgroup v2 here, so its sandboxes get rlimits "
                         "instead of cgroup limits (its own fallback)")
        for line in text.splitlines():
            if "enforced:" in line and "listening on" in line:
                notes.append(f"{server.label}: {line.split('enforced:', 1)[1].strip()[:240]}")
    return notes


def remove_containers(tag: str) -> None:
    """Removes the containers left by this run only: those whose LangBot session label (set by
    both runtimes) carries this run's tag. Never touches another container on the engine."""
    if shutil.which("docker") is None:
        return
    listing = subprocess.run(
        ["docker", "ps", "-a", "--filter", "label=langbot.box=true", "--format",
         '{{.ID}}\t{{.Label "langbot.session_id"}}\t{{.Names}}'],
        capture_output=True, text=True, check=False)
    ours = [line.split("\t")[0] for line in listing.stdout.splitlines()
            if tag in line.split("\t", 1)[-1]]
    if ours:
        print(f"removing {len(ours)} leftover containers of this run", file=sys.stderr)
        subprocess.run(["docker", "rm", "-f", *ours], capture_output=True, check=False)


# -- report -----------------------------------------------------------------------------------------


def tables(outcomes: dict, args, load: str) -> tuple[str, str]:
    """The report as plain text and as Markdown."""
    header = ["row", "Python runtime p50 ms", "Box p50 ms", "ratio Box/Python",
              f"target <= {TARGET_RATIO}", "result"]
    text, md = [], []
    md.append(f"Iterations per row: {args.iterations} (after {args.warmup} warm-up; each Box server"
              f" served {args.jit_warmup} warm execs first), p50; "
              f"{os.cpu_count()} CPUs, Linux {platform.release()}; "
              f"load average at start: {load}.\n")
    for pair_name, outcome in outcomes.items():
        pair = PAIRS[pair_name]
        if "skipped" in outcome:
            text.append(f"\n{pair_name}: SKIPPED: {outcome['skipped']}")
            md.append(f"\n**{pair_name}**: skipped: {outcome['skipped']}\n")
            continue
        results = outcome["results"]
        py = python_label(pair)
        for backend in pair.box_backends:
            bx = box_label(backend)
            title = f"{pair_name}: {py} vs {bx}"
            rows = []
            for row in ROWS + INFO_ROWS:
                p = statistics.median(results[row][py])
                b = statistics.median(results[row][bx])
                ratio = b / p
                if row in INFO_ROWS:
                    rows.append([row, f"{p:.1f}", f"{b:.1f}", f"{ratio:.3f}", "-", "info"])
                    continue
                verdict = "PASS" if ratio <= TARGET_RATIO else "MISS"
                rows.append([row, f"{p:.1f}", f"{b:.1f}", f"{ratio:.3f}", str(TARGET_RATIO),
                             verdict])
            rest = outcome.get("rest", {}).get(bx)
            if rest:
                r = statistics.median(rest)
                cost = statistics.median(results[ROWS[1]][bx]) - r
                rows.append(["warm exec over REST (Box's http.client)", "-", f"{r:.1f}", "-", "-",
                             "info"])
                rows.append(["the RPC path's cost (warm exec, RPC - REST)", "-", f"{cost:.1f}", "-",
                             f"<= {RPC_COST_TARGET_MS} ms",
                             "PASS" if cost <= RPC_COST_TARGET_MS else "MISS"])
            widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
            notes = [n for n in outcome.get("notes", []) if n.startswith((py + ":", bx + ":"))]
            text.append(f"\n{title}")
            for note in notes:
                text.append(f"  note: {note}")
            for r in [header, *rows]:
                text.append("  " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)))
            md.append(f"\n**{title}**\n")
            for note in notes:
                md.append(f"- {note}")
            md.append("")
            md.append("| " + " | ".join(header) + " |")
            md.append("|" + "|".join("---:" if 0 < i < len(header) - 1 else "---" for i in range(len(header))) + "|")
            for r in rows:
                md.append("| " + " | ".join(r) + " |")
    return "\n".join(text), "\n".join(md) + "\n"


def load_average() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


async def main_async(args) -> int:
    tag = "lbcmp" + secrets.token_hex(3)
    load = load_average()
    print(f"load average at start: {load}; {os.cpu_count()} CPUs; run tag {tag}", file=sys.stderr)
    workdir = tempfile.mkdtemp(prefix="langbot-compare-")
    outcomes = {}
    try:
        for pair_name in args.pairs:
            outcomes[pair_name] = await run_pair(PAIRS[pair_name], args, workdir, tag)
    finally:
        # The sandboxes' files may belong to other users (nsjail's mapped ids); root removes them.
        shutil.rmtree(workdir, ignore_errors=True)
    text, md = tables(outcomes, args, load)
    end_load = load_average()
    print(f"\nload average at start: {load}, at end: {end_load}")
    print(text)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(md.replace("load average at start: " + load,
                               f"load average at start: {load}, at end: {end_load}"))
    return 1 if any("skipped" in o for o in outcomes.values()) else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve-python", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--nsjail-dir", help=argparse.SUPPRESS)
    parser.add_argument("--iterations", type=int, default=30, help="samples per row and runtime")
    parser.add_argument("--warmup", type=int, default=5, help="untimed samples first")
    parser.add_argument("--quick", action="store_true",
                        help="10 iterations, 3 warm-up, 50 JIT warm-up execs")
    parser.add_argument("--jit-warmup", type=int, default=300,
                        help="untimed warm execs (and a tenth as many creates) each Box server"
                             " serves first")
    parser.add_argument("--pairs", default="namespace,docker", help="namespace, docker or both")
    parser.add_argument("--markdown", help="also write the tables to this file")
    parser.add_argument("--java", default=os.environ.get("BOX_COMPARE_JAVA", "java"))
    parser.add_argument("--box-jar", default=os.environ.get("BOX_COMPARE_JAR"))
    # The launcher scripts/python-client wrote (the tree's loader and paths); sys.executable is
    # the bare interpreter, which the host's C library cannot run.
    parser.add_argument("--python", default=os.environ.get("BOX_COMPARE_PYTHON", sys.executable))
    args = parser.parse_args()
    if args.serve_python:
        os.makedirs(args.nsjail_dir, exist_ok=True)
        serve_python(args.port, args.nsjail_dir)
        return 0
    if args.quick:
        args.iterations, args.warmup, args.jit_warmup = 10, 3, 50
    args.pairs = [p.strip() for p in args.pairs.split(",") if p.strip()]
    unknown = [p for p in args.pairs if p not in PAIRS]
    if unknown or not args.box_jar:
        parser.error(f"unknown pairs {unknown}" if unknown else "--box-jar is required")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    # SIGTERM (a timeout, a stopped job) ends the run like Ctrl-C: the `finally` blocks still stop
    # the servers and remove this run's sessions, containers and temporary directory.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    sys.exit(main())
