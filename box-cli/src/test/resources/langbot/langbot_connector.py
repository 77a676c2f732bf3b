"""How LangBot meets its Box runtime: its default `box` config section and its connector.

Shared by the interop driver beside it and by bench/langbot_compare.py, which both speak to a
runtime the way LangBot's BoxRuntimeConnector does. Needs the SDK (langbot-plugin-sdk) on the path.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from langbot_plugin.box.actions import LangBotToBoxAction
from langbot_plugin.box.client import ActionRPCBoxClient
from langbot_plugin.entities.io.actions.enums import CommonAction
from langbot_plugin.runtime.io.controllers.stdio.client import StdioClientController
from langbot_plugin.runtime.io.controllers.ws.client import WebSocketClientController
from langbot_plugin.runtime.io.handler import Handler


def default_config(host_root: str) -> dict:
    """LangBot's default `box` section (config.yaml) minus `runtime`, with `host_root` replaced."""
    return {
        "enabled": True,
        "backend": "local",
        "limits": {
            "max_sessions": 64,
            "max_managed_processes": 64,
            "max_completed_processes": 256,
            "max_workspace_entries": 100000,
            "max_admission_records": 100000,
            "max_rpc_file_bytes": 20971520,
        },
        "admission": {
            "required": False,
            "logical_session_id": "global",
            "required_backend": "nsjail",
            "max_sessions": 1,
            "max_managed_processes": 0,
            "max_grant_ttl_sec": 300,
            "max_timeout_sec": 120,
            "cpus": 1.0,
            "memory_mb": 512,
            "pids_limit": 128,
            "read_only_rootfs": True,
            "workspace_quota_mb": 0,
            "readiness_cache_sec": 15,
        },
        "local": {
            "profile": "default",
            "image": "",
            "host_root": host_root,
            "default_workspace": "",
            "skills_root": "skills",
            "allowed_mount_roots": [host_root, "/tmp"],
            "workspace_quota_mb": None,
        },
        "default_memory_mb": 1536,
        "docker": {"cpu_limit_enabled": True},
        "e2b": {"api_key": "", "api_url": "", "template": ""},
    }


class Connector:
    """Connects like LangBot's BoxRuntimeConnector: Handler, __ping, box_init, then serve it."""

    def __init__(
        self, config: dict, control_headers: dict[str, str], logger: logging.Logger
    ) -> None:
        self.config = config
        self.control_headers = control_headers
        self.client = ActionRPCBoxClient(logger=logger)
        self.handler: Handler | None = None
        self.controller = None
        self._task: asyncio.Task | None = None
        self._connected = asyncio.Event()
        self._error: list[BaseException] = []

    async def _on_connection(self, connection) -> None:
        handler = Handler(connection)
        self.handler = handler
        self.client.set_handler(handler)
        handler_task = asyncio.create_task(handler.run())
        try:
            await handler.call_action(CommonAction.PING, {})
            if self.config:
                await handler.call_action(LangBotToBoxAction.INIT, self.config)
            self._connected.set()
            await handler_task
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - reported as the connection's failure
            if not self._connected.is_set():
                self._error.append(exc)
                self._connected.set()

    async def _on_failed(self, _controller, exc) -> None:
        self._error.append(exc or RuntimeError("connection failed"))
        self._connected.set()

    async def connect_ws(self, url: str) -> None:
        self.controller = WebSocketClientController(
            ws_url=url,
            make_connection_failed_callback=self._on_failed,
            additional_headers=self.control_headers,
        )
        await self._start()

    async def connect_stdio(self, command: list[str], env: dict[str, str], cwd: str) -> None:
        self.controller = StdioClientController(
            command=command[0], args=command[1:], env=env, working_dir=cwd
        )
        await self._start()

    async def _start(self) -> None:
        self._task = asyncio.create_task(self.controller.run(self._on_connection))
        await asyncio.wait_for(self._connected.wait(), timeout=60.0)
        if self._error:
            raise self._error[0]

    async def close(self) -> None:
        if self.handler is not None:
            with contextlib.suppress(Exception):
                await self.handler.close()
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        close = getattr(self.controller, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                await close()
