"""Merging a pool's ordered MachineConfigs into one spec: the MCO's `MergeMachineConfigs` (notes/mco.md §2.4).

The rules, all of them, in the order they are applied (`configs` is already in merge order, order.py):

1. Ignition: every config is brought to the render version (3.5.0, `IGNITION_VERSION`, what the MCO
   renders) with `ignition.translate`. The result starts as the first MachineConfig's config (an absent
   config counts as `{"ignition": {"version": "3.5.0"}}`); each next MachineConfig that has a config is
   merged into it with Ignition's parent/child merge (ignfold.py). Before each merge every file of the
   child whose `contents.compression` is unset gets `""`, so that a later file without compression
   resets an earlier `gzip` (the MCO's work-around); after the merges every `compression: ""` is
   removed again and every file whose `overwrite` is unset gets `overwrite: true` -- except, unlike the
   MCO, a file without `contents.source` (an empty file, or one only setting mode/owner): Ignition
   refuses `overwrite: true` without a source (`overwrite must be false if source is unspecified`),
   and the rendered config is served to Ignition at first boot.
2. `fips` is the OR of all MachineConfigs.
3. `kernelType` is the last `realtime` or `64k-pages` in order, else `default`.
4. `kernelArguments` and 5. `extensions` are concatenated in order: no de-duplication, no splitting.
   `kernel-devel` with a non-default kernel type is refused (validate_mc.py).
6. `osImageURL` is the cluster default (cluster.yaml `osImageURL`), overridden by the LAST MachineConfig
   that is not generated (no `generated-by-controller-version` annotation) and sets a non-empty one.
7. `baseOSExtensionsContainerImage`: the same rule with cluster.yaml's `baseOSExtensionsContainerImage`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import chain, compress, repeat
from operator import contains, eq, is_not, or_, setitem
from typing import Any

from fleet.rendered import MachineConfigSpec
from ignition.errors import IgnitionError
from ignition.report import plain_covers
from ignition.translate import translate
from renderer.ignfold import Fold, merge_adopted, prune_empty
from renderer.model import MachineConfig

IGNITION_VERSION = "3.5.0"
SPECIAL_KERNEL_TYPES = ("realtime", "64k-pages")


class MergeError(Exception):
    """A MachineConfig's config could not be brought to the render version; `name` is the MachineConfig."""

    def __init__(self, name: str, message: str) -> None:
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


def to_render_version(config: Mapping[str, Any], *, name: str = "") -> Mapping[str, Any]:
    """The config in the render version (translated up or down with ignition.translate if needed)."""
    ignition = config.get("ignition")
    version = ignition.get("version") if type(ignition) is dict or isinstance(ignition, Mapping) else None
    if version == IGNITION_VERSION:
        return config
    try:
        return translate(config, IGNITION_VERSION)
    except IgnitionError as exc:
        raise MergeError(name, f"cannot translate Ignition {version} to {IGNITION_VERSION}: {exc}") from exc


def _owned_plain(entry: dict[str, Any], reset: bool) -> dict[str, Any]:
    """The fold's own copy of a plain file or directory (ignition/rules/plain.py: scalars, plus `contents`,
    `user` and `group` holding scalars), equal to what `copy_known` makes of it, after the compression
    reset when `reset`."""
    new = dict(entry)
    for owner in ("user", "group"):
        if owner in new:
            new[owner] = dict(new[owner])
    contents = entry.get("contents")
    if reset:
        contents = dict(contents) if contents is not None else {}
        if contents.get("compression") is None:
            contents["compression"] = ""
        new["contents"] = contents
    elif contents is not None:
        if contents:
            new["contents"] = dict(contents)
        else:
            del new["contents"]  # copy_known leaves empty objects out
    return new


def _owned_plain_file_reset(entry: dict[str, Any]) -> dict[str, Any]:
    """`_owned_plain(entry, True)` for a plain file, quicker in the usual shape (contents, no owners)."""
    contents = entry.get("contents")
    if type(contents) is dict and "compression" not in contents and "user" not in entry and "group" not in entry:
        return {**entry, "contents": {**contents, "compression": ""}}
    return _owned_plain(entry, True)


_RESET = {"compression": ""}
# dict's methods unbound, typed for the C-level passes (map) over lists of JSON objects
_get: Callable[[dict[str, Any], str], Any] = dict.get
_pop: Callable[[dict[str, Any], str], Any] = dict.pop
_setdefault: Callable[[dict[str, Any], str, Any], Any] = dict.setdefault
_has: Callable[[dict[str, Any], str], bool] = contains


def _owned_plain_files_reset(files: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """`[_owned_plain_file_reset(f) for f in files]` for plain files all in the usual shape (contents
    without compression, no owners), in C-level passes over the list; None when one is not."""
    contents = list(map(_get, files, repeat("contents")))
    if set(map(type, contents)) != {dict} or any(map(_has, contents, repeat("compression"))) \
            or any(map(_has, files, repeat("user"))) or any(map(_has, files, repeat("group"))):
        return None
    copies = list(map(dict.copy, files))
    deque(map(setitem, copies, repeat("contents"), map(or_, contents, repeat(_RESET))), maxlen=0)
    return copies


def _merge_batched_files(fold: Fold, batched: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Merge a pool's later plain files (`_files_batchable`) into the fold in one loop, with the
    compression reset, `merge_adopted`'s field-by-field merge and `_finish_files` folded in; return the
    result entries it added that still need `_finish_files`.

    The same result, key order included, as resetting each file, merging it child by child and finishing
    the result: a file in the usual shape (contents without compression, no owners) whose path is new is
    put in final at once (the reset's `""` would only be dropped again; `overwrite: true` beside a
    source). If a later file takes its path, it is first turned back into its reset copy, then merged
    into like any other entry."""
    items, index = fold.keyed_result_list("storage", "files")
    start, append = len(items), items.append
    unfinished: list[dict[str, Any]] = []
    made_final: dict[str, dict[str, Any]] = {}  # path -> the input file of an entry put in final form
    for f in batched:
        path = f["path"]
        contents = f.get("contents")
        usual = type(contents) is dict and "compression" not in contents and "user" not in f and "group" not in f
        existing = index.get(path)
        if existing is None:
            if usual:
                new = f.copy()
                new["contents"] = contents.copy()  # type: ignore[union-attr]  # usual: a dict
                if contents.get("source") is not None and new.get("overwrite") is None:  # type: ignore[union-attr]
                    new["overwrite"] = True
                made_final[path] = f
            else:
                new = _owned_plain_file_reset(f)
                unfinished.append(new)
            append(new)
            index[path] = new
            continue
        original = made_final.pop(path, None)
        if original is not None:  # back to the reset copy the child-by-child route would hold
            existing.clear()
            existing.update(_owned_plain_file_reset(original))
            unfinished.append(existing)
        fold.merged_into(existing)
        merge_adopted(existing, {**f, "contents": {**contents, "compression": ""}} if usual  # type: ignore[dict-item]
                       else _owned_plain_file_reset(f))
    fold.adopted(items[start:])  # what the loop appended
    return unfinished


def _owned_copies(config: Mapping[str, Any], plain: frozenset[int] | set[int], *,
                  reset: bool) -> tuple[Mapping[str, Any], frozenset[int]]:
    """`config` with the fold's own copies of its plain files and directories (and, when `reset`, every
    file's unset `contents.compression` made `""`); the copies' id()s are what the fold may adopt."""
    storage = config.get("storage")
    if not (type(storage) is dict or isinstance(storage, Mapping)):
        return config, frozenset()
    files = storage.get("files")
    dirs = storage.get("directories")
    if not (isinstance(files, list) and files) and not (plain and isinstance(dirs, list) and dirs):
        return config, frozenset()
    owned: list[int] = []
    new_storage = dict(storage)
    files_plain = isinstance(files, list) and plain_covers(plain, files)
    if isinstance(files, list) and files and reset and files_plain:
        # every file plain: the usual MachineConfig
        new_files = _owned_plain_files_reset(files) or [_owned_plain_file_reset(f) for f in files]
        owned.extend(map(id, new_files))
        new_storage["files"] = new_files
    elif isinstance(files, list) and files and (reset or plain):
        new_files = []
        for f in files:
            if files_plain or (plain and id(f) in plain):
                f = _owned_plain_file_reset(f) if reset else _owned_plain(f, False)
                owned.append(id(f))
            elif reset and isinstance(f, Mapping):
                contents = f.get("contents")
                contents = dict(contents) if isinstance(contents, Mapping) else {}
                if contents.get("compression") is None:
                    contents["compression"] = ""
                f = {**f, "contents": contents}
            new_files.append(f)
        new_storage["files"] = new_files
    if plain and isinstance(dirs, list) and dirs:
        new_dirs = []
        dirs_plain = plain_covers(plain, dirs)
        for d in dirs:
            if dirs_plain or id(d) in plain:
                d = _owned_plain(d, False)
                owned.append(id(d))
            new_dirs.append(d)
        new_storage["directories"] = new_dirs
    return {**config, "storage": new_storage}, frozenset(owned)


def _files(config: Mapping[str, Any]) -> list[Any]:
    storage = config.get("storage")
    files = storage.get("files") if type(storage) is dict or isinstance(storage, Mapping) else None
    return files if isinstance(files, list) else []


def _with_plain_entries(original: Mapping[str, Any], translated: Mapping[str, Any],
                        plain: frozenset[int] | set[int]) -> Mapping[str, Any]:
    """`translated` holding `original`'s own lists of plain files and directories wherever translation gave
    equal ones (plain entries mean the same in every spec version), so that their ids stay the ones
    validation vouched for and the merge's fast paths apply to configs of older versions too."""
    if translated is original or not plain:
        return translated
    storage, old_storage = translated.get("storage"), original.get("storage")
    if type(storage) is not dict or not isinstance(old_storage, Mapping):
        return translated
    kept = {}
    for name in ("files", "directories"):
        entries = old_storage.get(name)
        if type(entries) is list and entries and plain_covers(plain, entries) and storage.get(name) == entries:
            kept[name] = entries
    return {**translated, "storage": {**storage, **kept}} if kept else translated


def _without(config: Mapping[str, Any], files: bool, units: bool) -> dict[str, Any] | None:
    """`config` without `storage.files` (when `files`) and `systemd.units` (when `units`), and without a
    section left empty, keys in order; None when only an `ignition` of nothing but a version is left (the
    caller merges the batched parts itself, and that version is the fold's own: merging it changes nothing)."""
    ignition = config.get("ignition")
    if type(ignition) is dict and len(ignition) == 1 and ignition.get("version") == IGNITION_VERSION:
        for key, value in config.items():  # the usual child: nothing but its version and the batched lists?
            if not (key == "ignition" or (((key == "storage" and files) or (key == "systemd" and units))
                                          and len(value) == 1)):  # batched: a dict holding that list
                break
        else:
            return None
    out: dict[str, Any] = {}
    for key, value in config.items():
        if (key == "storage" and files) or (key == "systemd" and units):
            drop = "files" if key == "storage" else "units"
            value = {k: v for k, v in value.items() if k != drop}
            if not value:
                continue
        out[key] = value
    return out


def _simple_units(units: Any) -> bool:
    """A list of units that merge as flat dicts: each a dict holding only `name`, `contents`, `enabled` and
    `mask`, none null (no dropins): copy_known copies such a unit as it is, and merging one into another is
    `dict.update`."""
    return type(units) is list and all(type(u) is dict and _SIMPLE_UNIT_KEYS.issuperset(u) and None not in u.values()
                                       for u in units)


_SIMPLE_UNIT_KEYS = frozenset(("name", "contents", "enabled", "mask"))


def _units_batchable(configs: Sequence[Mapping[str, Any] | None]) -> bool:
    """Every config's `systemd` is absent or holds only simple units (`_simple_units`): units share their key
    space with nothing, so the pool may merge its later children's units in one loop at the end."""
    for config in configs:
        systemd = config.get("systemd") if config is not None else None
        if systemd is None:
            continue
        if type(systemd) is not dict or not systemd.keys() <= {"units"} or not _simple_units(systemd.get("units", [])):
            return False
    return True


def _merge_batched_units(fold: Fold, batched: list[dict[str, Any]]) -> None:
    """Merge a pool's later simple units (`_units_batchable`) into the fold, in order, in one loop."""
    items, index = fold.keyed_result_list("systemd", "units")
    for unit in batched:
        name = unit.get("name")
        existing = index.get(name)
        if existing is None:
            new = unit.copy()
            items.append(new)
            index[name] = new
        else:
            existing.update(unit)


def _units(config: Mapping[str, Any]) -> list[Any]:
    systemd = config.get("systemd")
    units = systemd.get("units") if type(systemd) is dict or isinstance(systemd, Mapping) else None
    return units if isinstance(units, list) else []


def _files_batchable(configs: Sequence[Mapping[str, Any] | None], plain: frozenset[int] | set[int]) -> bool:
    """Every config's files are plain, and no file path is the path of a directory or link of any config:
    then no merge of one child's files interacts with another part of any child (key-space drops), and
    the pool may merge its later children's files in one pass (`_merge_batched_files`)."""
    file_lists: list[list[Any]] = []
    other_paths: set[Any] = set()
    for config in configs:
        storage = config.get("storage") if config is not None else None
        if storage is None:
            continue
        if type(storage) is not dict:
            return False
        files = storage.get("files")
        if files:
            if type(files) is not list or not plain_covers(plain, files):
                return False
            file_lists.append(files)
        for name in ("directories", "links"):
            for entry in storage.get(name) or ():
                if not isinstance(entry, Mapping):
                    return False
                other_paths.add(entry.get("path"))
    # plain files are dicts holding a path
    return not other_paths or other_paths.isdisjoint(map(_get, chain.from_iterable(file_lists), repeat("path")))


def _finish_files(config: dict[str, Any]) -> None:
    """Drop `compression: ""` and default `overwrite` to true on every file that has contents."""
    _finish_file_list((config.get("storage") or {}).get("files") or ())


def _finish_file_list(files: Sequence[Any]) -> None:
    """`_finish_files` for a list of files: in C-level passes when every file is a dict with a contents
    object (the usual merged result); file by file otherwise."""
    if not files:
        return
    contents: list[Any] | None = list(map(_get, files, repeat("contents"))) \
        if set(map(type, files)) == {dict} else None
    if contents is None or set(map(type, contents)) != {dict}:
        _finish_files_one_by_one(files)
        return
    compressions = list(map(_get, contents, repeat("compression")))
    if "" in compressions:
        deque(map(_pop, compress(contents, map(eq, compressions, repeat(""))), repeat("compression")), maxlen=0)
    sourced = list(compress(files, map(is_not, map(_get, contents, repeat("source")), repeat(None))))
    if None in list(map(_setdefault, sourced, repeat("overwrite"), repeat(True))):
        _finish_files_one_by_one(files)  # an explicit `overwrite: null`


def _finish_files_one_by_one(files: Sequence[Any]) -> None:
    """`_finish_files` for any list of files."""
    for f in files:
        contents = f.get("contents")
        if type(contents) is not dict:
            continue
        if contents.get("compression") == "":
            del contents["compression"]
        if contents.get("source") is not None and f.get("overwrite") is None:
            f["overwrite"] = True


def merge_configs_traced(configs: Sequence[MachineConfig], plain: Collection[int] = (), *,
                         one_pass: bool = True) -> tuple[dict[str, Any], frozenset[int]]:
    """Rule 1: the merged Ignition config of MachineConfigs in merge order, plus the id()s of the result's
    entries that are copies of one input's plain entry.

    `plain`: id()s of the inputs' files and directories that validation found plain (ignition/rules/plain.py,
    `Report.plain`), or of their lists when all of a list is (`plain_covers`). Copies of those are made once here and adopted by the fold; those never merged into
    stay plain through `_finish_files` (an `overwrite: true` beside a source, an empty compression dropped),
    so the merged result's validation may skip their per-entry rules (validate_mc.validate_result)."""
    plain = plain if isinstance(plain, (set, frozenset)) else frozenset(plain)
    translated = [(mc, _with_plain_entries(mc.spec.config, to_render_version(mc.spec.config, name=mc.name), plain)
                   if mc.has_config else None) for mc in configs]
    configs_in = [c for _mc, c in translated]
    batching = one_pass and bool(plain) and _files_batchable(configs_in, plain)
    batching_units = one_pass and _units_batchable(configs_in)
    batched: list[dict[str, Any]] = []  # later children's plain files, merged in one pass at the end
    batched_units: list[dict[str, Any]] = []  # and simple units
    files_seen = units_seen = False  # the result holds files / units already (so its key order is set)
    fold: Fold | None = None
    for _mc, config in translated:
        if fold is None:
            base = config if config is not None else {"ignition": {"version": IGNITION_VERSION}}
            base, owned = _owned_copies(base, plain, reset=False) if plain else (base, frozenset())
            fold = Fold(base, IGNITION_VERSION, owned)
            files_seen, units_seen = bool(_files(base)), bool(_units(base))
            continue
        if config is None:
            continue
        files, units = _files(config), _units(config)
        take_files = batching and files_seen and bool(files)
        take_units = batching_units and units_seen and bool(units)
        if take_files or take_units:
            batched += files if take_files else ()
            batched_units += units if take_units else ()
            rest = _without(config, take_files, take_units)
            if rest is not None:
                child, owned = _owned_copies(rest, plain, reset=True)
                fold.merge(child, owned)
        else:
            child, owned = _owned_copies(config, plain, reset=True)
            fold.merge(child, owned)
        files_seen = files_seen or bool(files)
        units_seen = units_seen or bool(units)
    if fold is not None and batched_units:
        _merge_batched_units(fold, batched_units)
    result = fold.result if fold is not None else {"ignition": {"version": IGNITION_VERSION}}
    if fold is not None and batched:
        before = list(_files(result))
        _finish_file_list(before + _merge_batched_files(fold, batched))
    else:
        _finish_files(result)
    pruned = fold is None or fold.may_have_empties
    out = prune_empty(result) if pruned else result
    out.setdefault("ignition", {})["version"] = IGNITION_VERSION
    trusted = fold.trusted() if fold is not None and not pruned else frozenset()
    return out, trusted


def merge_machine_configs(configs: Sequence[MachineConfig], *, default_os_image: str = "",
                          default_extensions_image: str = "", one_pass: bool = True) -> MachineConfigSpec:
    """Rules 1-7: one MachineConfigSpec from MachineConfigs in merge order.

    `one_pass=False` merges every child through the fold, never a pool's later files and units in one loop
    at the end: the same result, slower (the reference route tests/renderer/test_merge_fast.py compares with)."""
    return merge_machine_configs_traced(configs, default_os_image=default_os_image,
                                        default_extensions_image=default_extensions_image, one_pass=one_pass)[0]


def merge_machine_configs_traced(configs: Sequence[MachineConfig], *, default_os_image: str = "",
                                 default_extensions_image: str = "",
                                 plain: Collection[int] = (),
                                 one_pass: bool = True) -> tuple[MachineConfigSpec, frozenset[int]]:
    """Rules 1-7, plus the plain result entries of `merge_configs_traced`."""
    kernel_type = "default"
    os_image, ext_image = default_os_image, default_extensions_image
    kargs: list[str] = []
    extensions: list[str] = []
    fips = False
    for mc in configs:
        spec = mc.spec
        fips = fips or spec.fips
        if spec.kernel_type in SPECIAL_KERNEL_TYPES:
            kernel_type = spec.kernel_type
        kargs.extend(spec.kernel_arguments)
        extensions.extend(spec.extensions)
        if not mc.generated:
            if spec.os_image_url:
                os_image = spec.os_image_url
            if spec.base_os_extensions_container_image:
                ext_image = spec.base_os_extensions_container_image
    config, trusted = merge_configs_traced(configs, plain, one_pass=one_pass)
    return MachineConfigSpec(config=config, os_image_url=os_image,
                             base_os_extensions_container_image=ext_image, kernel_arguments=tuple(kargs),
                             extensions=tuple(extensions), fips=fips, kernel_type=kernel_type), trusted
