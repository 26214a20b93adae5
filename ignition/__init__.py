"""Ignition spec 3.0-3.6: typed parse, validation with JSON paths, merge, translation, canonical JSON, data URLs.

The foundation: imports nothing of ours."""

from ignition.errors import IgnitionError, ParseError, TranslationError, ValidationError
from ignition.parse import check, parse
from ignition.report import Entry, Report
from ignition.validate import validate_dict
from ignition.versions import LATEST, SUPPORTED_VERSIONS

__all__ = [
    "LATEST",
    "SUPPORTED_VERSIONS",
    "Entry",
    "IgnitionError",
    "ParseError",
    "Report",
    "TranslationError",
    "ValidationError",
    "check",
    "parse",
    "validate_dict",
]
