"""A call run on a thread of its own while the agent's main thread watches for drift (applier/agent.py): the
long poll for the desired config holds its answer up to the sync interval, and drift must not wait for it.
`fileno()` becomes readable when the call is over, so one `select` waits for either."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class Background(Generic[T]):
    """`call()` started on a daemon thread (a stopping agent does not wait for a held answer)."""

    def __init__(self, call: Callable[[], T]) -> None:
        self._read, self._write = os.pipe()
        self._done = threading.Event()
        self._value: T | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call,), name="desired-config", daemon=True)
        self._thread.start()

    def _run(self, call: Callable[[], T]) -> None:
        try:
            self._value = call()
        except BaseException as exc:  # handed to the caller of result()  # noqa: BLE001
            self._error = exc
        finally:
            self._done.set()
            os.write(self._write, b"!")

    @property
    def done(self) -> bool:
        """True once the call returned or raised."""
        return self._done.is_set()

    def fileno(self) -> int:
        """Readable once the call is over."""
        return self._read

    def result(self) -> T:
        """Wait for the call; its value, or its exception raised here."""
        self._thread.join()
        os.close(self._read)
        os.close(self._write)
        if self._error is not None:
            raise self._error
        return self._value  # type: ignore[return-value]
