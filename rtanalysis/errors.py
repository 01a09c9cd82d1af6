"""The package's exceptions: a leaf module every stage may import, importing nothing of ours.

Stages raise these (or ordinary ``ValueError`` / ``FileNotFoundError``); only :mod:`rtanalysis.cli`
turns them into a one-line message and an exit status. Each class also derives from the builtin a
caller would catch without knowing this package (``ValueError``), so ``except ValueError`` keeps
working; :class:`RecordError` is internal to loading and stays a plain :class:`RtAnalysisError`.
"""

from __future__ import annotations


class RtAnalysisError(Exception):
    """Base of every error this package raises on purpose (a user or data problem, not a bug)."""


class UsageError(RtAnalysisError, ValueError):
    """An argument out of range or unknown (``draws=0``, an unknown preset or format)."""


class RecordError(RtAnalysisError):
    """A rule broken by one record: ``field`` names where, ``reason`` says what.

    Raised while validating a record and caught by the loader, which quarantines the record with
    its file and line; it never reaches the user.
    """

    def __init__(self, field: str, reason: str):
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason


class DataError(RtAnalysisError, ValueError):
    """Input that cannot be analysed at all; names the file, line and field when it knows them.

    ``str()`` reads ``file:line: field: reason`` with the parts that are known.
    """

    def __init__(self, reason: str, file: str | None = None, line: int | None = None, field: str | None = None):
        self.reason = reason
        self.file = None if file is None else str(file)
        self.line = line
        self.field = field
        where = ":".join(str(x) for x in (self.file, line) if x is not None)
        text = f"{field}: {reason}" if field else reason
        super().__init__(f"{where}: {text}" if where else text)


class NoDataError(DataError):
    """Nothing usable was read: no records in the paths, or every record quarantined."""


__all__ = ["RtAnalysisError", "UsageError", "RecordError", "DataError", "NoDataError"]
