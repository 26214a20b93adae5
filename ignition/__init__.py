"""Ignition spec 3.0-3.6: parsing, validation with JSON paths, merge, translation, canonical JSON, data URLs.

The foundation: imports nothing of ours."""

from ignition.canonical import canonical_json
from ignition.dataurl import DataURLError, decode_data_url, encode_data_url, gzip_contents
from ignition.errors import IgnitionError, TranslationError
from ignition.merge import MergeError, merge, merge_with_transcript
from ignition.parse import Checked, check
from ignition.report import Entry, Report
from ignition.translate import translate, translate_with_report
from ignition.validate import validate_dict
from ignition.versions import LATEST, SUPPORTED_VERSIONS

__all__ = [
    "LATEST",
    "Checked",
    "SUPPORTED_VERSIONS",
    "Entry",
    "IgnitionError",
    "Report",
    "TranslationError",
    "check",
    "validate_dict",
    "DataURLError",
    "MergeError",
    "canonical_json",
    "decode_data_url",
    "encode_data_url",
    "gzip_contents",
    "merge",
    "merge_with_transcript",
    "translate",
    "translate_with_report",
]
