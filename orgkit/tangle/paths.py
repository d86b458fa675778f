"""Emacs' file-name functions, which decide target names and the links in comments.

They differ from `os.path` in small ways that show up in tangled output: a
trailing slash survives expansion, `file-relative-name` compares strings rather
than path components, and search options such as `::*Heading` are treated as
part of the file name.
"""

from __future__ import annotations

import os
import pwd


def home() -> str:
    """$HOME as Emacs reads it (it follows the variable, not the password file)."""
    return os.environ.get("HOME") or pwd.getpwuid(os.getuid()).pw_dir


def _expand_tilde(name: str) -> str:
    if not name.startswith("~"):
        return name
    slash = name.find("/")
    user = name[1:] if slash < 0 else name[1:slash]
    rest = "" if slash < 0 else name[slash:]
    if not user:
        return home().rstrip("/") + rest if rest else home()
    try:
        return pwd.getpwnam(user).pw_dir + rest
    except KeyError:
        return name


def expand_file_name(name: str, directory: str) -> str:
    """`expand-file-name`: absolute, `~` expanded, `.`/`..`/`//` collapsed."""
    name = _expand_tilde(name)
    if not name.startswith("/"):
        directory = _expand_tilde(directory)
        name = directory.rstrip("/") + "/" + name
    trailing = name.endswith("/") and len(name) > 1
    parts: list[str] = []
    for part in name.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if parts:
                parts.pop()
            continue
        parts.append(part)
    result = "/" + "/".join(parts)
    if trailing and result != "/":
        result += "/"
    return result


def file_name_directory(name: str) -> str | None:
    """`file-name-directory`: everything up to the last slash, or None."""
    idx = name.rfind("/")
    return name[: idx + 1] if idx >= 0 else None


def file_name_sans_extension(name: str) -> str:
    """`file-name-sans-extension`: drop `.ext` from the last component (not a leading dot)."""
    idx = name.rfind("/")
    base = name[idx + 1 :]
    dot = base.rfind(".")
    return name[: idx + 1] + base[:dot] if dot > 0 else name


def file_relative_name(filename: str, directory: str, default_directory: str) -> str:
    """`file-relative-name`, including its string-prefix walk up the directory tree."""
    filename = expand_file_name(filename, default_directory)
    directory = expand_file_name(directory, default_directory)
    directory = directory if directory.endswith("/") else directory + "/"
    ancestor = "."
    filename_dir = filename if filename.endswith("/") else filename + "/"
    while not (filename_dir.startswith(directory) or filename.startswith(directory)):
        directory = file_name_directory(directory[:-1]) or "/"
        ancestor = ".." if ancestor == "." else "../" + ancestor
    rest = filename[len(directory) :]
    if ancestor == "." and rest:
        return rest
    return ancestor.rstrip("/") + "/" + rest


def abbreviate_file_name(name: str) -> str:
    """`abbreviate-file-name`: the home directory written as `~`."""
    homedir = expand_file_name(home(), "/")
    if homedir != "/" and (name == homedir or name.startswith(homedir.rstrip("/") + "/")):
        return "~" + name[len(homedir.rstrip("/")) :]
    return name
