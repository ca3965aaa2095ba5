"""Reading and writing array files (.npy, .npz, .json), atomically, and hashing them.

``np.load`` is always called with ``allow_pickle=False``: an object array is refused, never unpickled.
"""

from __future__ import annotations

import math
import os
import stat
import zipfile
import zlib
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

import numpy as np

from .. import strings
from ..errors import InputError, ResourceLimitError
from .common import OutputError
from .formats import python_values

Arrays = dict[str, np.ndarray]


def split_key(source: str) -> tuple[str, str | None]:
    """``file.npz:key`` -> (``file.npz``, ``key``); a source that is itself a file is never split."""
    if Path(source).is_file() or ":" not in source:
        return source, None
    for position, char in enumerate(source):
        if char == ":" and source[:position].lower().endswith(".npz") and Path(source[:position]).is_file():
            return source[:position], source[position + 1:]
    return source, None


def regular_file(path: str) -> None:
    """Refuse a path that is not a regular file: a FIFO or a device would block or never end."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        raise InputError(f"the file '{path}' does not exist") from None
    except OSError as exc:
        raise InputError(f"cannot read '{path}': {exc.strerror}") from None
    if stat.S_ISDIR(mode):
        raise InputError(f"'{path}' is a directory, not an array file")
    if not stat.S_ISREG(mode):
        raise InputError(f"'{path}' is not a regular file (a device, FIFO or socket)")


def read_numpy(path: str, only: str | None = None) -> np.ndarray | Arrays:
    """A .npy as an array, a .npz as a dict of arrays (just ``only``'s when given); anything unreadable is
    an InputError.

    Headers are checked before any array is allocated: a file that declares more data than it holds, or
    an array larger than the default memory limit, is refused, naming the file. Nothing is ever unpickled.
    """
    regular_file(path)
    try:
        _check_declared_sizes(path)
        data = np.load(path, allow_pickle=False)
        if isinstance(data, np.lib.npyio.NpzFile):
            with data:
                keys = [only] if only is not None and only in data.files else data.files
                return {key: _npz_member(path, key, data[key]) for key in keys}
        return data
    except FileNotFoundError:
        raise InputError(f"the file '{path}' does not exist") from None
    except MemoryError:
        raise ResourceLimitError(f"the arrays in '{path}' do not fit in memory") from None
    except ValueError as exc:
        raise InputError(
            f"cannot read '{path}': {exc}", hint="ir-run never unpickles; save numeric arrays (np.save / np.savez)"
        ) from None
    except (OSError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        raise InputError(f"cannot read '{path}' as .npy/.npz: {exc}") from None


def _npz_member(path: str, key: str, value: Any) -> np.ndarray:
    """A .npz member must be a .npy; numpy hands back any other member's raw bytes."""
    if not isinstance(value, np.ndarray):
        raise InputError(f"'{path}' member '{key}' is not a .npy array", hint="a .npz holds only .npy members")
    return value


def _check_declared_sizes(path: str) -> None:
    """Refuse files that are neither .npy nor zip, and .npy headers (also inside a .npz) that declare
    more bytes than the file holds."""
    with open(path, "rb") as handle:
        magic = handle.read(6)
        handle.seek(0)
        if magic == b"\x93NUMPY":
            _check_npy_header(handle, os.fstat(handle.fileno()).st_size, f"'{path}'")
            return
    if not zipfile.is_zipfile(path):
        raise InputError(f"'{path}' is not a .npy or .npz file (no NumPy header, not a zip archive)")
    with zipfile.ZipFile(path) as archive:
        for member in archive.infolist():
            if member.filename.endswith(".npy"):
                with archive.open(member) as handle:
                    _check_npy_header(handle, member.file_size, f"'{path}' member '{member.filename}'")


def _check_npy_header(handle, total_bytes: int, label: str) -> None:
    version = np.lib.format.read_magic(handle)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(handle)
    else:
        shape, _, dtype = np.lib.format.read_array_header_2_0(handle)
    if dtype.hasobject:
        return  # np.load refuses it without unpickling, with its own message
    declared = math.prod(shape) * dtype.itemsize
    available = total_bytes - handle.tell()
    if declared > available:
        raise InputError(f"{label} declares {dtype}{list(shape)} ({declared} bytes) but holds {available} bytes")
    from ..model import DEFAULT_MEMORY_LIMIT  # (the model is loaded already on every path that reads inputs)

    if declared > DEFAULT_MEMORY_LIMIT:
        raise ResourceLimitError(
            f"{label} holds {dtype}{list(shape)} ({declared} bytes), above the memory limit of"
            f" {DEFAULT_MEMORY_LIMIT} bytes for one input array"
        )


def read_json(path: str) -> Any:
    import json

    regular_file(path)
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise InputError(f"the file '{path}' does not exist") from None
    except UnicodeDecodeError:
        raise InputError(f"'{path}' is not JSON: it is not UTF-8 text") from None
    except OSError as exc:
        raise InputError(f"cannot read '{path}': {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"'{path}' is not valid JSON: {exc}") from None
    except RecursionError:
        raise InputError(f"'{path}' nests its JSON too deeply to be an array") from None


def read_arrays(source: str) -> np.ndarray | Arrays:
    """An array file for ``compare``/``--ref``: .npy, .npz (or ``file.npz:key``), or .json (list or object)."""
    path, key = split_key(source)
    if path.lower().endswith(".json"):
        data = read_json(path)
        if isinstance(data, dict):
            return {name: json_array(value, f"{path}['{name}']") for name, value in data.items()}
        return json_array(data, path)
    data = read_numpy(path)
    if key is None:
        return data
    if not isinstance(data, dict) or key not in data:
        keys = ", ".join(data) if isinstance(data, dict) else "none (a .npy)"
        raise InputError(f"'{path}' has no array named {key!r}; its keys: {keys}")
    return data[key]


def json_array(value: Any, where: str) -> np.ndarray:
    """Nested JSON lists of numbers/bools (or strings) as an array with numpy's natural dtype (bool, int64,
    float64; strings: an object array of str, each kept whole)."""
    try:
        array = np.asarray(value)
    except ValueError as exc:
        raise InputError(f"{where} is not a rectangular nested list: {exc}") from None
    except RecursionError:
        raise InputError(f"{where} nests its lists too deeply to be an array") from None
    if array.dtype.kind not in "biufU":
        raise InputError(f"{where} must hold numbers, booleans or strings (a nested list), got {array.dtype} values")
    if array.dtype.kind == "U":
        items = list(np.asarray(value, dtype=object).flat)
        if not all(isinstance(item, str) for item in items):
            raise InputError(f"{where} mixes strings with numbers or booleans",
                             hint="quote every element of a string input (numpy would turn 1 into '1')")
        return strings.from_items(items, array.shape)  # (a numpy str array drops an element's trailing NULs)
    return array


def make_folder(folder: Path) -> None:
    """Create ``folder`` and its parents (an existing folder is fine); failing is an OutputError."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create the folder '{folder}': {exc.strerror or exc}") from None


def atomic_write(path: Path, write: Callable[[IO[bytes]], None]) -> None:
    """Write through a temporary file in the same folder, then rename: readers never see half a file.

    The file gets the mode a plain ``open()`` would give it: a new file 0666 less the umask, a replaced file
    its own mode (``tempfile.mkstemp`` would make every file 0600). A symbolic link is written through: its
    target is replaced, the link kept (as ``open()`` would)."""
    path = Path(os.path.realpath(path)) if os.path.islink(path) else Path(path)
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError(f"cannot write '{path}': the folder '{folder}' does not exist")
    try:
        handle, temporary = _create_temporary(folder, path.name)
    except OSError as exc:
        raise OutputError(f"cannot write '{path}': {exc.strerror}") from None
    try:
        with os.fdopen(handle, "wb") as stream:
            write(stream)
        _keep_mode(path, temporary)
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise OutputError(f"cannot write '{path}': {exc.strerror or exc}", hint="nothing was written") from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _create_temporary(folder: Path, name: str) -> tuple[int, Path]:
    """A new file ``.NAME.RANDOM.tmp`` in ``folder``, opened for writing with mode 0666 (the umask applies)."""
    import secrets

    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    while True:
        temporary = folder / f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(temporary, flags, 0o666), temporary
        except FileExistsError:
            continue


def _keep_mode(path: Path, temporary: Path) -> None:
    """Give ``temporary`` the permission bits of the regular file ``path`` it is about to replace."""
    try:
        existing = os.stat(path)
    except FileNotFoundError:
        return
    if stat.S_ISREG(existing.st_mode):
        os.chmod(temporary, stat.S_IMODE(existing.st_mode))


def save_arrays(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """``.json`` -> ``{name: nested list}``; ``.npy`` -> the single array; anything else -> ``.npz``."""
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        import json

        text = json.dumps({name: python_values(a) for name, a in arrays.items()}, indent=1)
        atomic_write(path, lambda stream: stream.write(text.encode("utf-8")))
    elif suffix == ".npy":
        if len(arrays) != 1:
            raise InputError(f"'{path}' is a .npy, which holds one array; there are {len(arrays)}",
                             hint="use a .npz or .json file")
        atomic_write(path, lambda stream: np.save(stream, next(iter(arrays.values())), allow_pickle=False))
    else:
        atomic_write(path, lambda stream: _write_npz(stream, arrays))


def _write_npz(stream: IO[bytes], arrays: Mapping[str, np.ndarray]) -> None:
    """An uncompressed .npz as ``np.savez`` writes it, for any key (``np.savez(file=...)`` would clash)."""
    with zipfile.ZipFile(stream, "w", compression=zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, array in arrays.items():
            with archive.open(f"{name}.npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(array), allow_pickle=False)


def save_json(path: Path, obj: Any) -> None:
    from .formats import to_json

    text = to_json(obj) + "\n"
    atomic_write(path, lambda stream: stream.write(text.encode("utf-8")))


def file_sha256(path: str | Path) -> str:
    import hashlib  # only when a run is recorded or replayed

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def array_sha256(array: np.ndarray) -> str:
    """A hash of an array's dtype, shape and bytes."""
    import hashlib  # only when a run is recorded or replayed

    digest = hashlib.sha256(f"{array.dtype.str}{array.shape}".encode())
    digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def same_file(a: str | Path, b: str | Path) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve() or os.path.samefile(a, b)
    except OSError:
        return False
