"""Reading a model file's ``.npz`` members without trusting it.

An ``.npz`` file is a zip archive of ``.npy`` members. :class:`ModelArchive` opens only the
members the caller asks for, checks each ``.npy`` header (dtype kind, no objects, the shape the
model's JSON header declares) and the member's uncompressed size in the zip directory against
that shape *before* reading, then reads exactly that many bytes. So a hand-edited or hostile
file can neither make the loader unpickle, nor allocate more than its declared shapes imply,
nor read members the model does not use. A member stored twice (the zip directory would
silently serve the last copy) or one the model does not use makes the file damaged
(:meth:`ModelArchive.check_unique`, :meth:`ModelArchive.check_all_read`).
"""

from __future__ import annotations

import tokenize
import zipfile

import numpy as np
from numpy.lib import format as npy_format

from mklearn._sizes import MB

MAX_HEADER_BYTES = 8 * MB  # the JSON header of a model with thousands of kernels is < 1 MB
_NPY_HEADER_LIMIT = 10_000  # numpy's own limit on an .npy header


class ModelArchive:
    """The members of an ``.npz`` model file, read on request with checked shapes.

    Parameters
    ----------
    path : str
        The file.

    Raises
    ------
    FileNotFoundError, PermissionError
        If ``path`` does not exist or cannot be opened.
    ValueError
        If it is not a zip archive.
    """

    def __init__(self, path):
        self.path = path
        self._file = open(path, "rb")  # closed by __exit__; an OSError here is the path's
        try:  # an OSError from here on (a seek before the start) is the content's
            self._zip = zipfile.ZipFile(self._file)
        except (zipfile.BadZipFile, OSError) as exc:
            self._file.close()
            raise ValueError(f"{path} is not an mklearn model file (not an .npz archive)") from exc
        self._used = set()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._zip.close()
        self._file.close()
        return False

    def has(self, name) -> bool:
        return f"{name}.npy" in self._zip.NameToInfo

    def check_unique(self) -> None:
        """ValueError naming the first member the zip directory lists more than once."""
        seen = set()
        for info in self._zip.infolist():
            if info.filename in seen:
                count = sum(i.filename == info.filename for i in self._zip.infolist())
                raise ValueError(f"member '{info.filename}' is stored {count} times")
            seen.add(info.filename)

    def check_all_read(self) -> None:
        """ValueError naming the members the model did not read (call after reading it)."""
        unused = sorted(set(self._zip.NameToInfo) - self._used)
        if unused:
            raise ValueError(
                f"unexpected member{'s' if len(unused) > 1 else ''} "
                f"{', '.join(repr(name) for name in unused[:5])}"
                + (f" and {len(unused) - 5} more" if len(unused) > 5 else "")
                + " (not part of the model the header describes)"
            )

    def header_text(self) -> str:
        """The JSON header (a 0-d unicode array of at most :data:`MAX_HEADER_BYTES`)."""
        return str(self.read("header", shape=(), kinds="U", max_bytes=MAX_HEADER_BYTES))

    def shape_of(self, name, ndim):
        """The shape an array member's ``.npy`` header declares (reads only that header)."""
        with self._open(name) as handle:
            shape, _, _ = _npy_header(handle, name)
        if len(shape) != ndim:
            raise ValueError(f"member '{name}' has {len(shape)} dimensions, expected {ndim}")
        return shape

    def read(self, name, *, shape, kinds="f", max_bytes=None, finite=True):
        """The array ``name``, after checking its dtype kind and ``shape`` (a tuple of ints).

        Raises
        ------
        ValueError
            If the member is missing, its dtype kind is not in ``kinds`` or holds objects, its
            shape is not ``shape``, its size in the zip directory disagrees with that shape, or
            (``finite``) a float value is NaN or infinite.
        """
        with self._open(name) as handle:
            declared, fortran, dtype = _npy_header(handle, name)
            if dtype.hasobject or dtype.kind not in kinds:
                raise ValueError(f"member '{name}' has dtype {dtype}; expected kind {kinds!r}")
            if tuple(declared) != tuple(shape):
                raise ValueError(
                    f"member '{name}' has shape {tuple(declared)}; the model declares "
                    f"{tuple(shape)}"
                )
            nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
            if max_bytes is not None and nbytes > max_bytes:
                raise ValueError(f"member '{name}' holds {nbytes} bytes, more than {max_bytes}")
            info = self._zip.getinfo(f"{name}.npy")
            if info.file_size != handle.tell() + nbytes:
                raise ValueError(
                    f"member '{name}' is {info.file_size} bytes in the archive; its shape "
                    f"{tuple(shape)} implies {handle.tell() + nbytes}"
                )
            data = handle.read(nbytes)
            if len(data) != nbytes:
                raise ValueError(f"member '{name}' is truncated")
            handle.read(1)  # at the end: lets zipfile check the member's CRC
        array = np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran else "C")
        array = array.copy()
        if finite and dtype.kind == "f" and not np.all(np.isfinite(array)):
            raise ValueError(f"member '{name}' contains NaN or infinite values")
        return array

    def _open(self, name):
        member = f"{name}.npy"
        if member not in self._zip.NameToInfo:
            raise ValueError(f"member '{name}' is missing")
        self._used.add(member)
        try:
            return self._zip.open(member)
        except OSError as exc:  # offsets of a damaged directory point before the file
            raise ValueError(f"member '{name}' cannot be read ({exc})") from exc


def _npy_header(handle, name):
    try:
        version = npy_format.read_magic(handle)
        if version == (1, 0):
            return npy_format.read_array_header_1_0(handle, max_header_size=_NPY_HEADER_LIMIT)
        if version == (2, 0):
            return npy_format.read_array_header_2_0(handle, max_header_size=_NPY_HEADER_LIMIT)
        raise ValueError(f".npy format version {version}")
    except (ValueError, SyntaxError, TypeError, tokenize.TokenError) as exc:  # numpy parses
        raise ValueError(f"member '{name}' is not a valid .npy array ({exc})") from exc
