"""The OS image of each rendered config, as the claims and the held-claim counts compare them: whether moving a
node to its target changes its OS image (fleet/image_pulls.py: the image is pulled before the slot).

Why a cache read outside the claims: a rendered config never changes, and a claim's decision must never ask etcd
(its mirror's lock is held meanwhile, and the etcd thread needs that lock to deliver the answer), so the images a
decision lacks are named, read here on the caller's thread, and the claim decides again."""

from __future__ import annotations

from collections.abc import Sequence

from fleet.node_status import NodeStatus
from fleet.rendered import PoolRecord
from fleet.store import NotFound, Store, StoreError

MAX_KEPT = 4096  # configs whose image is kept; past it the cache starts again (old targets are asked no more)


class OsImages:
    """Rendered config -> its OS image ("" : none), for one server process."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._images: dict[str, str] = {}

    def get(self, name: str) -> str | None:
        """The config's OS image; None when not read yet (`load`)."""
        return self._images.get(name)

    def load(self, names: Sequence[str]) -> None:
        """Read the OS image of each config named (blocking: on a thread, outside any claim). A config the store
        does not have has none; one the store could not read now is left unread (asked again at the next claim)."""
        for name in names:
            if name in self._images:
                continue
            try:
                found = self.store.get_rendered(name).spec.os_image_url
            except NotFound:
                found = ""
            except StoreError:
                continue
            if len(self._images) > MAX_KEPT:
                self._images.clear()
            self._images[name] = found

    def needs_image(self, mine: NodeStatus, record: PoolRecord, unknown: list[str]) -> bool | None:
        """Whether moving the node to its target changes its OS image and it has not staged it; None when a config's
        image is not read yet (added to `unknown`: the caller `load`s them and decides again)."""
        target = record.target_for(mine.name)
        if not target or mine.staged == target:
            return False
        image, current = self._images.get(target), self._images.get(mine.current_config)
        if image is None or current is None:
            unknown.extend(n for n, found in ((target, image), (mine.current_config, current)) if found is None)
            return None
        return bool(image) and image != current
