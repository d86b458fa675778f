"""Turning a file's bytes into the text Emacs would see.

Positions must count characters as Emacs counts point: a UTF-8 BOM is not part
of the buffer, and a file whose every line ends in CRLF is read with DOS line
endings, so each CRLF is one character.
"""

from __future__ import annotations


class UndecodableFile(ValueError):
    """Bytes that are not an org text file (binary junk, another encoding)."""


def decode_org(data: bytes) -> str:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if b"\x00" in data:
        raise UndecodableFile("binary file (NUL bytes), skipped")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UndecodableFile(f"not UTF-8 (byte {exc.start}), skipped") from None
    if b"\r" in data and text.count("\r\n") == text.count("\n"):  # the bytes test is the cheap one
        text = text.replace("\r\n", "\n")
    return text
