"""Real-tool fixtures for the image builder tests: a tiny umoci base image, a local docker-registry,
ignition-apply and systemctl reference trees. Everything lives in temporary directories; the registry is
started on 127.0.0.1 on a free port and stopped by its PID."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from tests.tools import real_tool


def run(*argv: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None) -> str:
    """Run a tool, failing the test with its output when it exits non-zero."""
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(map(str, argv))} exited {proc.returncode}:\n{proc.stdout}\n{proc.stderr}")
    return proc.stdout


def make_base_image(root: Path, tag: str = "v1") -> Path:
    """A tiny bootc-looking base image in an OCI layout, made with umoci; returns the layout path."""
    umoci = real_tool("umoci")
    layout = root / "base"
    run(umoci, "init", "--layout", layout)
    run(umoci, "new", "--image", f"{layout}:{tag}")
    bundle = root / "bundle"
    run(umoci, "unpack", "--image", f"{layout}:{tag}", bundle)
    rootfs = bundle / "rootfs"
    for d in ("etc/systemd/system", "usr/lib/modules/6.1.0-tiny", "usr/bin", "sysroot"):
        (rootfs / d).mkdir(parents=True, exist_ok=True)
    (rootfs / "usr/lib/os-release").write_text("ID=tinyos\nVERSION_ID=1\n")
    (rootfs / "usr/lib/modules/6.1.0-tiny/vmlinuz").write_bytes(b"not a kernel\n")
    (rootfs / "etc/base.conf").write_text("from the base image\n")
    (rootfs / "etc/chrony.conf").write_text("pool base.example\n")
    os.symlink("sysroot/ostree", rootfs / "ostree")
    os.symlink("usr/bin", rootfs / "bin")
    os.symlink("usr/lib", rootfs / "lib")            # a symlinked directory, as on merged-/usr systems
    (rootfs / "etc/sudoers.d").mkdir(mode=0o750)       # a parent directory that is not 0755
    os.chmod(rootfs / "etc/sudoers.d", 0o750)
    shutil.copy2(real_tool("busybox"), rootfs / "usr/bin/busybox")
    for applet in ("sh", "chown", "ls", "cat", "true"):
        os.symlink("busybox", rootfs / "usr/bin" / applet)
    run(umoci, "repack", "--image", f"{layout}:{tag}", bundle)
    run(umoci, "config", "--image", f"{layout}:{tag}", "--config.label", "containers.bootc=1",
        "--config.label", "ostree.bootable=1", "--config.env", "PATH=/usr/bin:/bin", "--config.cmd", "/bin/sh")
    run(umoci, "gc", "--layout", layout)
    return layout


@pytest.fixture(scope="session")
def base_layout(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`oci:<path>:v1`, shared by the tests of a session (read-only for them)."""
    return make_base_image(tmp_path_factory.mktemp("base"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def running_registry(root: Path, extra_config: str = "") -> Iterator[str]:
    """Start docker-registry with storage under root; yields `127.0.0.1:PORT`; stopped by its PID."""
    binary = real_tool("docker-registry")
    port = _free_port()
    (root / "config.yml").write_text(
        "version: 0.1\nlog: {level: warn, accesslog: {disabled: true}}\n"
        f"storage: {{filesystem: {{rootdirectory: {root / 'data'}}}, delete: {{enabled: true}}}}\n"
        f"http: {{addr: 127.0.0.1:{port}, secret: test-only}}\n" + extra_config)
    log = open(root / "log", "wb")
    proc = subprocess.Popen([str(binary), "serve", str(root / "config.yml")], stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                if requests.get(f"http://127.0.0.1:{port}/v2/", timeout=1).status_code in (200, 401):
                    break
            except requests.RequestException:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"docker-registry did not start:\n{(root / 'log').read_text()}")
            time.sleep(0.05)
        yield f"127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="session")
def registry(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A docker-registry on 127.0.0.1:<free port> with storage in a temp dir; yields `127.0.0.1:PORT`."""
    with running_registry(tmp_path_factory.mktemp("registry")) as host:
        yield host
