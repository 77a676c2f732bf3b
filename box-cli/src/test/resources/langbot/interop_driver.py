"""Drives a Box server with LangBot's own, unchanged Python client (langbot-plugin-sdk).

It connects the way LangBot's BoxRuntimeConnector does (a Handler on the connection, __ping, then
box_init with the `box` config section minus `runtime`), over WebSocket to a running Box or over
stdio to a Box it launches itself, and then calls every action of the control channel through
ActionRPCBoxClient, asserting what LangBot relies on. Checks are grouped; --groups picks some.

Every check is reported as `PASS group/name` or `FAIL group/name: why`; the script exits 1 when
any check failed, 2 when it could not connect at all, and prints a summary per group last.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import hashlib
import io
import json
import logging
import os
import secrets
import sys
import traceback
import zipfile

import websockets

from langbot_plugin.box import errors
from langbot_plugin.box.actions import LangBotToBoxAction
from langbot_plugin.box.models import (
    BoxExecutionStatus,
    BoxManagedProcessSpec,
    BoxManagedProcessStatus,
    BoxSpec,
    SandboxAdmissionGrant,
    SandboxAdmissionRevocation,
)
from langbot_plugin.box.security import (
    BOX_CONTROL_TOKEN_ENV,
    BOX_CONTROL_TOKEN_HEADER,
    BOX_INSTANCE_HEADER,
    BOX_PLACEMENT_GENERATION_HEADER,
    BOX_TRUSTED_INSTANCE_ENV,
    BOX_WORKSPACE_HEADER,
)
from langbot_plugin.box.tenancy import box_namespace
from langbot_plugin.entities.io.actions.enums import CommonAction
from langbot_plugin.entities.io.context import ActionContext

from langbot_connector import Connector, default_config

GROUPS = (
    "core",
    "workspace",
    "processes",
    "errors",
    "auth",
    "skills",
    "stdio_defaults",
    "admission",
    "shutdown",
)

INSTANCE = "langbot-interop-instance"
CONTEXT = ActionContext(
    instance_uuid=INSTANCE, workspace_uuid="langbot-interop-workspace", placement_generation=1
)
# How long a wait for a state (a process to exit) may take before the check fails.
STATE_WAIT_SEC = 30.0

log = logging.getLogger("langbot-interop")


class CheckFailed(AssertionError):
    pass


def expect(condition: bool, message: str) -> None:
    if not condition:
        raise CheckFailed(message)


def expect_equal(actual, expected, what: str) -> None:
    if actual != expected:
        raise CheckFailed(f"{what}: expected {expected!r}, got {actual!r}")


async def expect_raises(error_class: type, call, *, contains: str = ""):
    """Awaits `call`; passes when it raises an `error_class` whose message has `contains`."""
    try:
        result = await call
    except Exception as exc:  # noqa: BLE001 - the class is what is checked
        if not isinstance(exc, error_class):
            raise CheckFailed(
                f"expected {error_class.__name__}, got {type(exc).__name__}: {exc}"
            ) from exc
        if contains and contains not in str(exc):
            raise CheckFailed(f"expected {contains!r} in the message, got: {exc}") from exc
        return exc
    raise CheckFailed(f"expected {error_class.__name__}, got a result: {result!r}")


class Report:
    def __init__(self) -> None:
        self.results: list[tuple[str, str, str | None]] = []

    async def check(self, group: str, name: str, body) -> bool:
        try:
            await body()
        except Exception as exc:  # noqa: BLE001 - every failure is reported, none stops the run
            if isinstance(exc, CheckFailed):
                why = str(exc)
            else:
                why = f"{type(exc).__name__}: {exc}"
                log.debug("check %s/%s raised", group, name, exc_info=True)
            why = why.replace("\n", " ")[:600]
            self.results.append((group, name, why))
            print(f"FAIL {group}/{name}: {why}", flush=True)
            return False
        self.results.append((group, name, None))
        print(f"PASS {group}/{name}", flush=True)
        return True

    def failed(self) -> bool:
        return any(why is not None for _, _, why in self.results)

    def summary(self) -> str:
        lines = ["", "summary:"]
        groups: dict[str, list[tuple[str, str | None]]] = {}
        for group, name, why in self.results:
            groups.setdefault(group, []).append((name, why))
        for group, checks in groups.items():
            failures = [(name, why) for name, why in checks if why is not None]
            state = "ok" if not failures else f"{len(failures)} FAILED"
            lines.append(f"  {group}: {len(checks)} checks, {state}")
            for name, why in failures:
                lines.append(f"    FAIL {group}/{name}: {why}")
        total = len(self.results)
        failed = sum(1 for _, _, why in self.results if why is not None)
        lines.append(f"  total: {total} checks, {failed} failed")
        return "\n".join(lines)


class Driver:
    def __init__(self, args, connector: Connector, report: Report) -> None:
        self.args = args
        self.connector = connector
        self.client = connector.client
        self.report = report
        self.host_root = os.path.abspath(connector.config["local"]["host_root"])
        self.relay_base = args.relay_base

    def relay_headers(self) -> dict[str, str]:
        """What LangBot's connector sends on a relay handshake (get_relay_headers)."""
        return {
            **self.connector.control_headers,
            BOX_WORKSPACE_HEADER: CONTEXT.workspace_uuid,
            BOX_PLACEMENT_GENERATION_HEADER: str(CONTEXT.placement_generation),
        }

    def tenant_workspace(self) -> str:
        """The host_path LangBot gives a Workspace's execs: <default_workspace>/tenants/<ns>."""
        return os.path.join(self.host_root, "default", "tenants", box_namespace(CONTEXT))

    async def check(self, group: str, name: str, body) -> bool:
        return await self.report.check(group, name, body)

    async def check_all(self, group: str, *bodies) -> None:
        """Checks each of `bodies` in turn, each under its own name."""
        for body in bodies:
            await self.check(group, body.__name__, body)

    # -- core: every host action and the session life cycle ----------------------------------

    async def core(self) -> None:
        g = "core"
        handler = self.connector.handler

        async def ping():
            expect_equal(await handler.call_action(CommonAction.PING, {}), {}, "__ping data")

        async def init():
            await self.client.init(self.connector.config)

        async def health():
            await self.client.initialize()  # box_health, raising BoxRuntimeUnavailableError
            data = await handler.call_action(LangBotToBoxAction.HEALTH, {})
            expect(isinstance(data.get("name"), str), f"box_health name: {data}")
            expect_equal(data.get("available"), True, "box_health available")

        async def get_backend_info():
            info = await self.client.get_backend_info()
            expect(isinstance(info.get("name"), str) and info["name"], f"backend name: {info}")
            expect_equal(info.get("available"), True, "backend available")

        async def status():
            st = await self.client.get_status(CONTEXT)
            for key in ("backend", "active_sessions", "managed_processes", "session_ttl_sec"):
                expect(key in st, f"box_status lacks {key}: {st}")
            expect_equal(st["backend"].get("available"), True, "status backend.available")
            for key in (
                "max_sessions",
                "max_managed_processes",
                "max_completed_processes",
                "max_admission_records",
                "max_rpc_file_bytes",
            ):
                expect(key in st.get("limits", {}), f"box_status limits lack {key}: {st}")
            expect_equal(st["limits"]["max_rpc_file_bytes"], 20971520, "limits.max_rpc_file_bytes")

        async def exec_stdout():
            r = await self.client.execute(BoxSpec(cmd="echo hello", session_id="interop-exec"), CONTEXT)
            expect_equal(r.session_id, "interop-exec", "logical session_id in the result")
            expect_equal(r.status, BoxExecutionStatus.COMPLETED, "status")
            expect_equal(r.exit_code, 0, "exit_code")
            expect_equal(r.stdout.strip(), "hello", "stdout")
            expect(r.ok, "ok")
            expect(isinstance(r.duration_ms, int) and r.duration_ms >= 0, f"duration {r.duration_ms}")

        async def exec_exit_code_and_stderr():
            r = await self.client.execute(
                BoxSpec(cmd="echo oops >&2; exit 3", session_id="interop-exec"), CONTEXT
            )
            expect_equal(r.exit_code, 3, "exit_code")
            expect_equal(r.stderr.strip(), "oops", "stderr")
            expect(not r.ok, "ok must be false")

        async def exec_env():
            r = await self.client.execute(
                BoxSpec(
                    cmd='printf "%s" "$GREETING"',
                    env={"GREETING": "hi there"},
                    session_id="interop-exec",
                ),
                CONTEXT,
            )
            expect_equal(r.stdout, "hi there", "stdout")

        async def exec_workdir():
            r = await self.client.execute(
                BoxSpec(cmd="pwd", workdir="/tmp", session_id="interop-exec"), CONTEXT
            )
            expect_equal(r.stdout.strip(), "/tmp", "pwd")

        async def exec_timeout():
            r = await self.client.execute(
                BoxSpec(cmd="echo started; sleep 60", timeout_sec=1, session_id="interop-timeout"),
                CONTEXT,
            )
            expect_equal(r.status, BoxExecutionStatus.TIMED_OUT, "status")
            expect_equal(r.exit_code, None, "exit_code of a timed-out exec")
            expect(not r.ok, "ok must be false")

        async def session_create_get_list_delete():
            spec = BoxSpec(session_id="interop-session")
            info = await self.client.create_session(spec, CONTEXT)
            expect_equal(info.get("session_id"), "interop-session", "created session_id")
            expect(isinstance(info.get("backend_name"), str), f"backend_name: {info}")
            for key in ("backend_session_id", "network", "mount_path", "created_at", "last_used_at"):
                expect(key in info, f"session info lacks {key}: {info}")
            got = await self.client.get_session("interop-session", CONTEXT)
            expect_equal(got.get("session_id"), "interop-session", "get_session session_id")
            listed = [s.get("session_id") for s in await self.client.get_sessions(CONTEXT)]
            expect("interop-session" in listed, f"get_sessions: {listed}")
            await self.client.delete_session("interop-session", CONTEXT)
            listed = [s.get("session_id") for s in await self.client.get_sessions(CONTEXT)]
            expect("interop-session" not in listed, f"deleted session still listed: {listed}")
            await expect_raises(
                errors.BoxSessionNotFoundError, self.client.get_session("interop-session", CONTEXT)
            )

        async def status_counts_sessions():
            st = await self.client.get_status(CONTEXT)
            listed = await self.client.get_sessions(CONTEXT)
            expect_equal(st["active_sessions"], len(listed), "active_sessions vs get_sessions")

        await self.check_all(
            g, ping, init, health, get_backend_info, status, exec_stdout, exec_exit_code_and_stderr,
            exec_env, exec_workdir, exec_timeout, session_create_get_list_delete,
            status_counts_sessions,
        )

    # -- workspace: an exec in the host_path LangBot builds for a Workspace --------------------

    async def workspace_exec(self, g: str, session_id: str, *, langbot_creates_dir: bool) -> None:
        tenant = self.tenant_workspace()

        async def default_workspace_exists():
            path = os.path.join(self.host_root, "default")
            expect(os.path.isdir(path), f"box_init did not create the default workspace {path}")

        async def exec_in_tenant_workspace():
            if langbot_creates_dir:
                # A stdio child shares LangBot's filesystem, so LangBot creates the directory.
                os.makedirs(tenant, exist_ok=True)
            spec = BoxSpec(
                cmd="echo from-the-box > note.txt && cat note.txt && pwd",
                session_id=session_id,
                host_path=tenant,
                host_path_mode="rw",
                mount_path="/workspace",
                workdir="/workspace",
            )
            r = await self.client.execute(spec, CONTEXT)
            expect_equal(r.exit_code, 0, f"exit_code (stderr: {r.stderr!r})")
            expect_equal(r.stdout.split(), ["from-the-box", "/workspace"], "stdout")
            note = os.path.join(tenant, "note.txt")
            expect(os.path.isfile(note), f"{note} not written on the host")
            with open(note, encoding="utf-8") as f:
                expect_equal(f.read().strip(), "from-the-box", "host file content")

        await self.check(g, "default_workspace_created", default_workspace_exists)
        await self.check(g, "exec_in_tenant_host_path", exec_in_tenant_workspace)
        if g == "stdio_defaults":

            async def host_root_holds_no_box_state():
                # LangBot's host_root is Box's default data dir here: Box keeps its own state in
                # .box-state, beside LangBot's workspaces and skills.
                entries = set(os.listdir(self.host_root)) - {"default", "skills", ".box-state"}
                expect(not entries, f"Box state in LangBot's host_root: {sorted(entries)}")

            await self.check(g, "host_root_holds_no_box_state", host_root_holds_no_box_state)

    async def verify_shared_workspace(self) -> None:
        """The Cloud shared-volume challenge: a probe LangBot writes, that Box digests."""
        root = os.path.join(self.host_root, "default")
        name = ".langbot-box-volume-probe-" + secrets.token_hex(16)
        data = secrets.token_bytes(64)
        fd = os.open(os.path.join(root, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        try:
            result = await self.client.verify_shared_workspace(name)
            expect_equal(result.get("marker_name"), name, "marker_name")
            expect_equal(result.get("sha256"), hashlib.sha256(data).hexdigest(), "sha256")
            expect_equal(result.get("size"), 64, "size")
            await expect_raises(
                errors.BoxReadinessError, self.client.verify_shared_workspace("../etc/passwd")
            )
        finally:
            os.unlink(os.path.join(root, name))

    # -- processes: managed processes and the stdio relay ---------------------------------------

    async def processes(self) -> None:
        g = "processes"
        sid = "interop-mcp"
        pid = "echo-server"
        echo = 'while IFS= read -r line; do echo "got:$line"; done'

        async def start():
            await self.client.create_session(BoxSpec(session_id=sid), CONTEXT)
            info = await self.client.start_managed_process(
                sid,
                BoxManagedProcessSpec(
                    process_id=pid, command="sh", args=["-c", echo], env={"SECRET_X": "v"}
                ),
                CONTEXT,
            )
            expect_equal(info.session_id, sid, "logical session_id")
            expect_equal(info.process_id, pid, "process_id")
            expect_equal(info.status, BoxManagedProcessStatus.RUNNING, "status")
            expect_equal(info.command, "sh", "command")
            expect_equal(info.env_keys, ["SECRET_X"], "env_keys (names only)")

        async def get():
            info = await self.client.get_managed_process(sid, pid, CONTEXT)
            expect_equal(info.status, BoxManagedProcessStatus.RUNNING, "status")
            session = await self.client.get_session(sid, CONTEXT)
            expect(pid in session.get("managed_processes", {}), f"get_session processes: {session}")

        async def relay_roundtrip():
            url = self.client.get_managed_process_websocket_url(sid, self.relay_base, pid, CONTEXT)
            expect("/managed-process/" + pid + "/ws" in url, f"relay url {url}")
            async with websockets.connect(
                url, subprotocols=["mcp"], additional_headers=self.relay_headers(), proxy=None
            ) as ws:
                expect_equal(ws.subprotocol, "mcp", "negotiated subprotocol")
                await ws.send('{"jsonrpc":"2.0","id":1,"method":"ping"}')
                reply = await asyncio.wait_for(ws.recv(), STATE_WAIT_SEC)
                expect_equal(str(reply).strip(), 'got:{"jsonrpc":"2.0","id":1,"method":"ping"}', "echo")
                info = await self.client.get_managed_process(sid, pid, CONTEXT)
                expect_equal(info.attached, True, "attached while a relay holds it")
            info = await self.client.get_managed_process(sid, pid, CONTEXT)
            expect_equal(info.status, BoxManagedProcessStatus.RUNNING, "still running after detach")

        async def relay_refuses_a_wrong_token():
            url = self.client.get_managed_process_websocket_url(sid, self.relay_base, pid, CONTEXT)
            headers = dict(self.relay_headers())
            headers[BOX_CONTROL_TOKEN_HEADER] = "x" * 48
            headers[BOX_INSTANCE_HEADER] = "another-instance"
            try:
                async with websockets.connect(url, additional_headers=headers, proxy=None):
                    raise CheckFailed("the relay accepted another instance with a wrong token")
            except websockets.exceptions.InvalidStatus as exc:
                expect_equal(exc.response.status_code, 401, "status")

        async def stop():
            await self.client.stop_managed_process(sid, pid, CONTEXT)
            await expect_raises(
                errors.BoxManagedProcessNotFoundError,
                self.client.get_managed_process(sid, pid, CONTEXT),
            )

        async def exit_is_seen():
            await self.client.start_managed_process(
                sid,
                BoxManagedProcessSpec(process_id="short", command="sh", args=["-c", "read x; echo bye:$x; exit 4"]),
                CONTEXT,
            )
            url = self.client.get_managed_process_websocket_url(sid, self.relay_base, "short", CONTEXT)
            frames = []
            async with websockets.connect(
                url, subprotocols=["mcp"], additional_headers=self.relay_headers(), proxy=None
            ) as ws:
                await ws.send("now")
                with contextlib.suppress(websockets.exceptions.ConnectionClosed):
                    while True:
                        frames.append(str(await asyncio.wait_for(ws.recv(), STATE_WAIT_SEC)))
            expect_equal("".join(frames).strip(), "bye:now", "stdout before the close")
            info = await self.wait_for_exit(sid, "short")
            expect_equal(info.exit_code, 4, "exit_code")

        async def delete_session():
            await self.client.delete_session(sid, CONTEXT)

        await self.check_all(
            g, start, get, relay_roundtrip, relay_refuses_a_wrong_token, stop, exit_is_seen,
            delete_session,
        )

    async def wait_for_exit(self, sid: str, pid: str):
        loop = asyncio.get_running_loop()
        deadline = loop.time() + STATE_WAIT_SEC
        while True:
            info = await self.client.get_managed_process(sid, pid, CONTEXT)
            if info.status == BoxManagedProcessStatus.EXITED:
                return info
            if loop.time() > deadline:
                raise CheckFailed(f"process {pid} did not exit: {info}")
            await asyncio.sleep(0.1)

    # -- errors: the error classes the client raises --------------------------------------------

    async def errors(self) -> None:
        g = "errors"

        async def validation_error():
            await expect_raises(
                errors.BoxValidationError,
                self.client.execute(BoxSpec(cmd="   ", session_id="interop-err"), CONTEXT),
            )

        async def session_not_found():
            await expect_raises(
                errors.BoxSessionNotFoundError, self.client.get_session("no-such-session", CONTEXT)
            )
            await expect_raises(
                errors.BoxSessionNotFoundError, self.client.delete_session("no-such-session", CONTEXT)
            )

        async def managed_process_not_found():
            await self.client.create_session(BoxSpec(session_id="interop-err"), CONTEXT)
            await expect_raises(
                errors.BoxManagedProcessNotFoundError,
                self.client.get_managed_process("interop-err", "no-such-process", CONTEXT),
            )
            await expect_raises(
                errors.BoxManagedProcessNotFoundError,
                self.client.stop_managed_process("interop-err", "no-such-process", CONTEXT),
            )

        async def session_conflict():
            await expect_raises(
                errors.BoxSessionConflictError,
                self.client.create_session(BoxSpec(session_id="interop-err", cpus=2.0), CONTEXT),
                contains="already exists",
            )

        async def another_instance_is_refused():
            other = ActionContext(instance_uuid="another-instance", workspace_uuid="w")
            await expect_raises(errors.BoxError, self.client.get_sessions(other))

        async def capacity_exceeded():
            for s in await self.client.get_sessions(CONTEXT):
                await self.client.delete_session(s["session_id"], CONTEXT)
            limits = dict(self.connector.config["limits"], max_sessions=1, max_managed_processes=0)
            await self.client.init({"limits": limits})
            try:
                await self.client.create_session(BoxSpec(session_id="interop-cap-a"), CONTEXT)
                await expect_raises(
                    errors.BoxCapacityExceededError,
                    self.client.create_session(BoxSpec(session_id="interop-cap-b"), CONTEXT),
                )
                await expect_raises(
                    errors.BoxCapacityExceededError,
                    self.client.start_managed_process(
                        "interop-cap-a", BoxManagedProcessSpec(command="cat"), CONTEXT
                    ),
                )
            finally:
                await self.client.init({"limits": self.connector.config["limits"]})
                with contextlib.suppress(errors.BoxError):
                    await self.client.delete_session("interop-cap-a", CONTEXT)

        async def invalid_limits_refused():
            await expect_raises(
                errors.BoxError,
                self.client.init({"limits": {"max_sessions": "many"}}),
                contains="box.limits.max_sessions must be an integer",
            )

        await self.check_all(
            g, validation_error, session_not_found, managed_process_not_found, session_conflict,
            another_instance_is_refused, capacity_exceeded, invalid_limits_refused,
        )

    # -- auth: who may open the control channel -------------------------------------------------

    async def auth(self) -> None:
        g = "auth"

        async def refused(headers: dict[str, str]):
            other = Connector({}, headers, log)
            try:
                await other.connect_ws(self.args.url + "/rpc/ws")
            except Exception as exc:  # noqa: BLE001 - a refused handshake is what is expected
                expect("401" in str(exc), f"expected an HTTP 401 refusal, got {exc!r}")
                return
            finally:
                await other.close()
            raise CheckFailed(f"a connection with {sorted(headers)} was accepted")

        async def no_token_refused():
            await refused({BOX_INSTANCE_HEADER: INSTANCE})

        async def wrong_token_refused():
            await refused({BOX_INSTANCE_HEADER: INSTANCE, BOX_CONTROL_TOKEN_HEADER: "y" * 48})

        async def another_instance_refused():
            await refused({**self.connector.control_headers, BOX_INSTANCE_HEADER: "another-instance"})

        await self.check_all(g, no_token_refused, wrong_token_refused, another_instance_refused)

    # -- skills: the 11 skill actions -----------------------------------------------------------

    async def skills(self) -> None:
        g = "skills"
        name = "interop-skill"
        state: dict = {}

        async def create():
            skill = await self.client.create_skill(
                {
                    "name": name,
                    "display_name": "Interop skill",
                    "description": "made by the interop test",
                    "instructions": "Say hello.",
                },
                CONTEXT,
            )
            expect_equal(skill.get("name"), name, "name")
            expect_equal(skill.get("description"), "made by the interop test", "description")
            expect(skill.get("package_root"), f"package_root: {skill}")
            expect(os.path.isfile(os.path.join(skill["package_root"], "SKILL.md")), "SKILL.md on disk")
            state["root"] = skill["package_root"]

        async def list_and_get():
            names = [s.get("name") for s in await self.client.list_skills(CONTEXT)]
            expect(name in names, f"list_skills: {names}")
            skill = await self.client.get_skill(name, CONTEXT)
            expect_equal((skill or {}).get("instructions", "").strip(), "Say hello.", "instructions")
            expect_equal(await self.client.get_skill("no-such-skill", CONTEXT), None, "unknown skill")

        async def update():
            skill = await self.client.update_skill(name, {"description": "updated"}, CONTEXT)
            expect_equal(skill.get("description"), "updated", "description")

        async def write_list_read_files():
            written = await self.client.write_skill_file(name, "scripts/run.sh", "echo hi\n", CONTEXT)
            expect_equal(written.get("bytes_written"), 8, "bytes_written")
            listing = await self.client.list_skill_files(name, ".", action_context=CONTEXT)
            paths = [e.get("path") for e in listing.get("entries", [])]
            expect("SKILL.md" in paths, f"entries: {paths}")
            expect(any(p and p.startswith("scripts") for p in paths), f"entries: {paths}")
            read = await self.client.read_skill_file(name, "scripts/run.sh", CONTEXT)
            expect_equal(read.get("content"), "echo hi\n", "content")
            await expect_raises(
                errors.BoxValidationError,
                self.client.read_skill_file(name, "../../escape.txt", CONTEXT),
            )

        async def scan_directory():
            expect("root" in state, "no package_root: create failed")
            skill = await self.client.scan_skill_directory(state["root"], CONTEXT)
            expect_equal(skill.get("name"), name, "scanned name")

        async def zip_preview_and_install():
            archive = io.BytesIO()
            with zipfile.ZipFile(archive, "w") as z:
                z.writestr(
                    "zip-skill/SKILL.md",
                    "---\nname: zip-skill\ndescription: from a zip\n---\n\nUnzip me.\n",
                )
                z.writestr("zip-skill/tool.py", "print('hi')\n" + "#" * 40000)  # > one chunk
            data = archive.getvalue()
            previews = await self.client.preview_skill_zip(data, "zip-skill.zip", action_context=CONTEXT)
            expect(len(previews) == 1, f"previews: {previews}")
            expect_equal(previews[0].get("name"), "zip-skill", "preview name")
            source = previews[0].get("source_path")
            expect(source is not None, f"preview lacks source_path: {previews[0]}")
            installed = await self.client.install_skill_zip(
                data, "zip-skill.zip", source_paths=[source], action_context=CONTEXT
            )
            expect_equal([s.get("name") for s in installed], ["zip-skill"], "installed")
            skill = await self.client.get_skill("zip-skill", CONTEXT)
            expect_equal((skill or {}).get("description"), "from a zip", "installed description")

        async def exec_with_skill_mount():
            # LangBot mounts every skill visible to a pipeline at /workspace/.skills/<name>.
            expect("root" in state, "no package_root: create failed")
            spec = BoxSpec(
                cmd=f"cat /workspace/.skills/{name}/scripts/run.sh",
                session_id="interop-skill-exec",
                extra_mounts=[
                    {
                        "host_path": state["root"],
                        "mount_path": f"/workspace/.skills/{name}",
                        "mode": "rw",
                    }
                ],
            )
            r = await self.client.execute(spec, CONTEXT)
            expect_equal((r.exit_code, r.stdout.strip()), (0, "echo hi"), f"exec ({r.stderr!r})")
            await self.client.delete_session("interop-skill-exec", CONTEXT)

        async def invalid_name():
            await expect_raises(
                errors.BoxValidationError, self.client.create_skill({"name": "bad name!"}, CONTEXT)
            )

        async def delete():
            await self.client.delete_skill(name, CONTEXT)
            await self.client.delete_skill("zip-skill", CONTEXT)
            expect_equal(await self.client.get_skill(name, CONTEXT), None, "deleted skill")
            await expect_raises(errors.BoxValidationError, self.client.delete_skill(name, CONTEXT))

        await self.check_all(
            g, create, list_and_get, update, write_list_read_files, scan_directory,
            zip_preview_and_install, exec_with_skill_mount, invalid_name, delete,
        )

    # -- admission: grant-enforced mode (leaves the runtime in it: run it on its own server) ----

    async def admission(self) -> None:
        g = "admission"

        def grant(revision: int) -> SandboxAdmissionGrant:
            return SandboxAdmissionGrant(
                instance_uuid=INSTANCE,
                workspace_uuid=CONTEXT.workspace_uuid,
                execution_generation=1,
                entitlement_revision=revision,
                expires_at=dt.datetime.now(dt.timezone.utc) + dt.timedelta(seconds=120),
                max_sessions=1,
                max_managed_processes=0,
            )

        async def grants_refused_when_not_enforced():
            await expect_raises(
                errors.BoxAdmissionError, self.client.upsert_sandbox_admission_grant(grant(1))
            )
            await expect_raises(
                errors.BoxAdmissionError,
                self.client.revoke_sandbox_admission_grant(
                    SandboxAdmissionRevocation(
                        instance_uuid=INSTANCE,
                        workspace_uuid=CONTEXT.workspace_uuid,
                        entitlement_revision=1,
                    )
                ),
            )

        async def verify_shared_workspace():
            await self.verify_shared_workspace()

        async def enable_with_box_init():
            config = json.loads(json.dumps(self.connector.config))
            config["admission"]["required"] = True
            await self.client.init(config)

        async def sandbox_actions_refused():
            # Box has no nsjail backend, so grant-enforced readiness cannot hold: refused as
            # LangBot maps it, whether readiness or the missing grant is checked first.
            calls = {
                "box_exec": lambda: self.client.execute(
                    BoxSpec(cmd="true", session_id="global"), CONTEXT
                ),
                "box_create_session": lambda: self.client.create_session(
                    BoxSpec(session_id="global"), CONTEXT
                ),
                "box_get_sessions": lambda: self.client.get_sessions(CONTEXT),
            }
            for action, call in calls.items():
                try:
                    await call()
                except (errors.BoxReadinessError, errors.BoxAdmissionError):
                    continue
                except Exception as exc:  # noqa: BLE001
                    raise CheckFailed(
                        f"{action}: expected BoxReadinessError/BoxAdmissionError, got {exc!r}"
                    ) from exc
                raise CheckFailed(f"{action} ran in grant-enforced mode without readiness")

        async def health_reports_readiness():
            try:
                data = await self.connector.handler.call_action(LangBotToBoxAction.HEALTH, {})
            except Exception as exc:  # noqa: BLE001
                expect("BoxReadinessError:" in str(exc), f"box_health error: {exc}")
                return
            expect_equal(data.get("mode"), "grant_enforced", "readiness mode")
            expect_equal(data.get("ready"), False, "ready without nsjail")

        async def upsert_and_revoke_grant():
            installed = await self.client.upsert_sandbox_admission_grant(grant(2))
            expect_equal(installed.get("installed"), True, "installed")
            expect_equal(installed.get("entitlement_revision"), 2, "entitlement_revision")
            await expect_raises(
                errors.BoxAdmissionError, self.client.upsert_sandbox_admission_grant(grant(1)),
                contains="stale",
            )
            revoked = await self.client.revoke_sandbox_admission_grant(
                SandboxAdmissionRevocation(
                    instance_uuid=INSTANCE, workspace_uuid=CONTEXT.workspace_uuid, entitlement_revision=2
                )
            )
            expect_equal(revoked.get("revoked"), True, "revoked")
            await expect_raises(
                errors.BoxAdmissionError, self.client.upsert_sandbox_admission_grant(grant(2)),
                contains="revoked",
            )

        async def cannot_be_disabled_in_process():
            # box_init with required: false is accepted, but enforcement stays, and what needs
            # the admission policy now says why it is unusable.
            await self.client.init(self.connector.config)
            await expect_raises(
                errors.BoxReadinessError,
                self.client.upsert_sandbox_admission_grant(grant(3)),
                contains="cannot be disabled",
            )
            await expect_raises(
                errors.BoxReadinessError,
                self.client.execute(BoxSpec(cmd="true", session_id="global"), CONTEXT),
            )

        await self.check_all(g, grants_refused_when_not_enforced, verify_shared_workspace)
        if await self.check(g, "enable_with_box_init", enable_with_box_init):
            await self.check_all(
                g, sandbox_actions_refused, health_reports_readiness, upsert_and_revoke_grant,
                cannot_be_disabled_in_process,
            )

    # -- shutdown ------------------------------------------------------------------------------

    async def shutdown(self) -> None:
        g = "shutdown"

        async def drops_every_session():
            await self.client.create_session(BoxSpec(session_id="interop-keep", persistent=True), CONTEXT)
            data = await self.connector.handler.call_action(LangBotToBoxAction.SHUTDOWN, {})
            expect_equal(data, {}, "box_shutdown data")
            expect_equal(await self.client.get_sessions(CONTEXT), [], "sessions after box_shutdown")

        await self.check(g, "drops_every_session", drops_every_session)


async def run(args) -> int:
    report = Report()
    groups = [g for g in GROUPS if g in args.groups]
    token = os.environ.get(BOX_CONTROL_TOKEN_ENV, "").strip()
    if args.transport == "stdio" and not token:
        token = secrets.token_urlsafe(48)  # LangBot generates one for the runtime it spawns
    headers = {BOX_INSTANCE_HEADER: INSTANCE}
    if token:
        headers[BOX_CONTROL_TOKEN_HEADER] = token

    if args.transport == "ws":
        host_root = os.path.abspath(args.host_root)
        connector = Connector(default_config(host_root), headers, log)
        connect = connector.connect_ws(args.url + "/rpc/ws")
    else:
        # As LangBot spawns its runtime: its own environment plus the three LANGBOT_BOX_*
        # variables, the `box` section with LangBot's defaults, in LangBot's working directory.
        config = default_config("./data/box")
        config["local"]["allowed_mount_roots"] = ["./data/box", "/tmp"]
        env = os.environ.copy()
        env[BOX_CONTROL_TOKEN_ENV] = token
        env[BOX_TRUSTED_INSTANCE_ENV] = INSTANCE
        env["LANGBOT_BOX_CONFIG"] = json.dumps(config)
        connector = Connector(config, headers, log)
        command = json.loads(args.box_command) + ["-s", "--ws-control-port", str(args.port)]
        connect = connector.connect_stdio(command, env, os.getcwd())

    try:
        await connect
    except Exception as exc:  # noqa: BLE001
        print(f"FAIL connect: {type(exc).__name__}: {exc}", flush=True)
        await connector.close()
        return 2
    print(f"PASS connect ({args.transport})", flush=True)

    driver = Driver(args, connector, report)
    try:
        for group in groups:
            if group == "workspace":
                await driver.workspace_exec("workspace", "interop-workspace", langbot_creates_dir=False)
            elif group == "stdio_defaults":
                await driver.workspace_exec("stdio_defaults", "interop-defaults", langbot_creates_dir=True)
            else:
                await getattr(driver, group)()
    except Exception:  # noqa: BLE001 - a bug in this script, not a failed check
        traceback.print_exc()
        report.results.append(("driver", "crashed", "see the traceback above"))
    finally:
        process = getattr(connector.controller, "process", None)
        if process is not None:
            await report.check(
                "stdio", "exits_when_langbot_closes_the_pipe", lambda: _exits_on_eof(connector)
            )
        await connector.close()
    print(report.summary(), flush=True)
    return 1 if report.failed() else 0


async def _exits_on_eof(connector: Connector) -> None:
    """Closing the connection closes the runtime's stdin; it must then stop by itself."""
    process = connector.controller.process
    await connector.handler.close()
    try:
        await asyncio.wait_for(process.wait(), STATE_WAIT_SEC)
    except asyncio.TimeoutError:
        raise CheckFailed("the runtime still runs after its stdin closed") from None
    expect_equal(process.returncode, 0, "the runtime's exit code after stdin closed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transport", choices=("ws", "stdio"), required=True)
    parser.add_argument("--url", help="ws: the runtime's base URL, ws://127.0.0.1:PORT")
    parser.add_argument("--host-root", help="ws: box.local.host_root to send (absolute)")
    parser.add_argument("--box-command", help="stdio: JSON list that launches `box serve`")
    parser.add_argument("--port", type=int, help="stdio: --ws-control-port for the runtime")
    parser.add_argument("--relay-base", required=True, help="http://127.0.0.1:PORT for relays")
    parser.add_argument(
        "--groups",
        default=os.environ.get("BOX_INTEROP_GROUPS", ",".join(GROUPS)),
        help="comma-separated groups to run, of: " + ", ".join(GROUPS),
    )
    args = parser.parse_args()
    args.groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    unknown = [g for g in args.groups if g not in GROUPS]
    if unknown:
        parser.error(f"unknown groups {unknown}; known: {', '.join(GROUPS)}")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
