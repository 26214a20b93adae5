"""Source URL rules (Ignition `types/url.go`): which schemes each spec version fetches, S3 and ARN forms, data URLs."""

from __future__ import annotations

from functools import cache, lru_cache

from ignition.dataurl import BAD_ESCAPE, COMMON_DATA_URL, DATA_URL_LINES, data_url_problem
from ignition.rules import go_url
from ignition.versions import at_least

INVALID_URL = "unable to parse url"
INVALID_SCHEME = "invalid url scheme"


@cache
def _schemes(version: str) -> frozenset[str]:
    schemes = {"http", "https", "tftp", "s3", "data"}
    if at_least(version, "3.2.0"):
        schemes.add("gs")
    if at_least(version, "3.4.0"):
        schemes.add("arn")
    return frozenset(schemes)


def _version_id_error(raw_query: str) -> str | None:
    values = go_url.query_values(raw_query).get("versionId")
    if values is not None and (len(values) == 0 or values[0] == ""):
        return "invalid S3 object VersionId"
    return None


def _check_arn(u: go_url.GoURL) -> str | None:
    full = u.scheme + ":" + u.opaque
    bad = "invalid S3 ARN format"
    if not full.startswith("arn:") or full.count(":") < 5:
        return bad
    sections = full.split(":", 5)
    if len(sections) != 6 or not sections[1] or not sections[2] or not sections[5]:
        return bad
    if sections[2] != "s3":
        return bad
    resource = sections[5]
    parts = full.split("/")
    if resource.startswith("accesspoint/"):
        if len(parts) < 3:
            return bad
    elif len(parts) < 2:
        return bad
    return _version_id_error(u.raw_query)


# The memo is bounded in entries and in size: at most 32,768 sources of up to 1 KiB each (32 MiB); longer
# sources (big data URLs) are checked afresh rather than kept alive by it.
_CACHED_URL_LENGTH = 1024


def check_url(source: str, version: str) -> str | None:
    """Ignition's validateURL for a source string in `version`; the error text or None.

    A pure function of its two strings, so short sources are memoised: a renderer validates each input config
    and then the merged result, which repeats every source."""
    if len(source) <= _CACHED_URL_LENGTH:
        return _check_url_cached(source, version)
    return _check_url(source, version)


@lru_cache(maxsize=32768)
def _check_url_cached(source: str, version: str) -> str | None:
    return _check_url(source, version)


def _check_url(source: str, version: str) -> str | None:
    if go_url.is_opaque_with_scheme(source, "data"):  # every version fetches data URLs
        return data_url_problem(source)
    try:
        u = go_url.parse(source)
    except go_url.URLError:
        return INVALID_URL
    scheme = u.scheme
    if scheme not in _schemes(version):
        return INVALID_SCHEME
    if scheme == "s3":
        return _version_id_error(u.raw_query)
    if scheme == "arn":
        return _check_arn(u)
    if scheme == "data":
        return data_url_problem(source)
    return None


def check_url_nil_ok(source: str | None, version: str) -> str | None:
    """validateURLNilOK: an unset or empty source is fine (it fetches nothing)."""
    if not source:
        return None
    return check_url(source, version)


def all_common_data_urls(sources: list[str]) -> bool:
    """True when every source is a data URL of the common shape (ignition/dataurl.py `COMMON_DATA_URL`), which
    `check_url` accepts in every spec version: a whole list of sources answered in C, no Python code per
    source (the usual `data:,` URLs joined by newlines and tested in one pass; other shapes one regex match
    each). False says nothing: the caller checks its sources one by one."""
    joined = "\n".join(sources)
    if (joined.count("\n") == len(sources) - 1 and DATA_URL_LINES.fullmatch(joined) is not None
            and BAD_ESCAPE.search(joined) is None):
        return True
    return None not in map(COMMON_DATA_URL.fullmatch, sources)


def scheme_of(source: str) -> str | None:
    """The lower-cased scheme Go's url.Parse finds, or None when it cannot parse the URL."""
    try:
        return go_url.parse(source).scheme
    except go_url.URLError:
        return None


def clear_cache() -> None:
    """Empty the check_url memo (see ignition/rules/caches.py)."""
    _check_url_cached.cache_clear()
