"""Resume state that cannot run planted code: an HMAC-SHA256 seal over every file Tune unpickles on ``--resume``.

``Tuner.restore`` unpickles ``tuner.pkl``, the cloudpickled fields of ``experiment_state-*.json`` and the search
algorithm's ``*-state-*.json|pkl`` (all top-level ``*.json`` / ``*.pkl`` of the sweep's Tune folder), so whoever can
write the storage could make the next ``--resume`` run code. Each Tune folder therefore holds a seal
(:data:`SEAL`): the SHA-256 of the last few versions of each such file that this driver wrote, and an HMAC-SHA256
over that list and the folder's name, keyed by a secret that never lives in the storage (:func:`key_path`).

The digests are taken where Tune writes: ``tuner.pkl`` as the Tuner is built, the experiment state in the driver's
local staging folder each time Tune saves it, before Tune uploads it (:class:`StateSealer`), so a sweep killed at any
moment leaves a storage state its seal covers. ``--resume`` checks the seal before anything is unpickled
(:func:`verify`): a missing seal or key, a wrong MAC or an unsealed file is refused in one line.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
from pathlib import Path
from typing import Any

import pyarrow.fs as pafs
from pydantic import BaseModel, ConfigDict
from ray import tune

from core.files.source import MIB, InputFileError, decode_text
from core.files.structured import parse_json
from platform.errors import UsageError
from platform.run import storage as tune_storage

KEY_ENV = "PUTLAB_RESUME_KEY"  # path of the key file (default: ~/.config/putlab/resume.key)
SEAL = "putlab.seal"  # neither .json nor .pkl: Tune never copies or reads it
KEPT_VERSIONS = 3  # digests kept per file: the storage may lag a save or two behind the driver's staging folder
MIN_KEY_CHARS = 32
MAX_SEAL_BYTES = 4 * MIB  # a seal holds a few digests per file of a Tune folder: kilobytes


def key_path() -> Path:
    """The key file: ``$PUTLAB_RESUME_KEY``, else ``$XDG_CONFIG_HOME/putlab/resume.key`` (``~/.config`` by default)."""
    if os.environ.get(KEY_ENV):
        return Path(os.environ[KEY_ENV]).expanduser()
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config") / "putlab" / "resume.key"


def read_key() -> bytes:
    """The secret; a UsageError when the key file is missing, too short, or others could read or replace it."""
    path = key_path()
    try:
        info = path.stat()
    except FileNotFoundError:
        raise UsageError(f"no resume key at {path}: the key that sealed the sweep's state lives outside the storage; "
                         f"point {KEY_ENV} at it") from None
    if not stat.S_ISREG(info.st_mode) or info.st_uid not in (os.geteuid(), 0):
        raise UsageError(f"resume key {path} must be a file owned by you (uid {os.geteuid()}) or root")
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH | stat.S_IROTH):
        raise UsageError(f"resume key {path} is readable or writable by others (mode {stat.filemode(info.st_mode)}); "
                         f"chmod 600 it")
    key = path.read_bytes().strip()
    if len(key) < MIN_KEY_CHARS:
        raise UsageError(f"resume key {path} is shorter than {MIN_KEY_CHARS} characters")
    return key


def load_or_create_key() -> bytes:
    """The secret, made on first use: 64 random hex digits in a new file of mode 0600 (its folder 0700)."""
    path = key_path()
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:  # another sweep made it a moment ago
            return read_key()
        with os.fdopen(fd, "w") as out:
            out.write(secrets.token_hex(32) + "\n")
    return read_key()


def digest(data: bytes) -> str:
    """SHA-256 of ``data`` in hex."""
    return hashlib.sha256(data).hexdigest()


def unpickled(name: str) -> bool:
    """Whether Tune reads ``name`` (a top-level file of a Tune folder) on restore: its ``*.json`` and ``*.pkl``."""
    return name.endswith((".json", ".pkl"))


def mac(key: bytes, folder_name: str, files: dict[str, list[str]]) -> str:
    """HMAC-SHA256 over the Tune folder's name and its files' digests (canonical JSON)."""
    message = json.dumps({"folder": folder_name, "files": files}, sort_keys=True).encode()
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def read_seal(fs: pafs.FileSystem, folder: str, key: bytes) -> dict[str, list[str]] | None:
    """The sealed digests of the Tune folder ``folder`` (None: no seal); a UsageError when the seal is not intact."""
    name = Path(folder).name
    path = f"{folder}/{SEAL}"
    if fs.get_file_info(path).type != pafs.FileType.File:
        return None
    with fs.open_input_stream(path) as stream:
        sealed = parsed_seal(stream.read(MAX_SEAL_BYTES + 1), path)
    if sealed is None or not hmac.compare_digest(mac(key, name, sealed.files), sealed.mac):
        raise UsageError(f"refusing to resume {name}: its seal {path} does not match the resume key {key_path()} "
                         f"(the state was changed, or sealed with another key)")
    return sealed.files


class Seal(BaseModel):
    """What the seal file holds: the digests of each sealed file, and their MAC."""

    model_config = ConfigDict(extra="forbid", strict=True)
    files: dict[str, list[str]]
    mac: str


def parsed_seal(data: bytes, path: str) -> Seal | None:
    """The seal file's contents, or None when they are no seal (too large, not UTF-8 JSON, off its schema)."""
    if len(data) > MAX_SEAL_BYTES:
        return None
    try:
        return parse_json(decode_text(data, path), Seal, path)
    except InputFileError:
        return None


def write_seal(fs: pafs.FileSystem, folder: str, key: bytes, files: dict[str, list[str]]) -> None:
    """Write the seal of ``files`` into the Tune folder (whole or not at all: written aside, then moved in place)."""
    text = json.dumps({"files": files, "mac": mac(key, Path(folder).name, files)}, sort_keys=True, indent=1)
    aside = f"{folder}/.{SEAL}.tmp"
    with fs.open_output_stream(aside) as stream:
        stream.write(text.encode())
    fs.move(aside, f"{folder}/{SEAL}")


def verify(location: str) -> None:
    """Refuse (UsageError, one line) to resume the Tune folder at ``location`` (path or URI) unless every file Tune
    unpickles on restore is one this driver wrote and sealed with the resume key; reads no pickle."""
    verify_folder(*tune_storage.filesystem(location))


def verify_folder(fs: pafs.FileSystem, folder: str) -> None:
    """:func:`verify` of the Tune folder ``folder`` on ``fs``."""
    name = Path(folder).name
    key = read_key()
    files = read_seal(fs, folder, key)
    if files is None:
        raise UsageError(f"refusing to resume {name}: its Tune state has no seal ({SEAL}), so nothing proves it is "
                         f"the state the sweep wrote (resuming unpickles it); start the sweep again")
    for entry in fs.get_file_info(pafs.FileSelector(folder)):
        if entry.type == pafs.FileType.File and unpickled(entry.base_name):
            with fs.open_input_stream(entry.path) as stream:
                found = digest(stream.read())
            if found not in files.get(entry.base_name, []):
                raise UsageError(f"refusing to resume {name}: {entry.base_name} is not the state the sweep wrote "
                                 f"(it changed after it was sealed; resuming would unpickle it)")


class StateSealer(tune.Callback):
    """Keeps a Tune folder's seal current while the sweep runs (the first of the Tuner's callbacks).

    Tune calls :meth:`get_state` while it saves the experiment state, after writing the files into the driver's
    staging folder and before uploading them: the seal then covers every version the storage can hold (except the
    very first save of a new sweep, sealed one Tune step, about 0.1 s, later: the sealer learns the staging folder
    from the trials). Nothing of a run travels in ``tuner.pkl``: a restored sealer finds its folder again through
    the trials' storage."""

    def __init__(self) -> None:
        self._fs: pafs.FileSystem | None = None
        self._folder = ""
        self._staging: Path | None = None
        self._files: dict[str, list[str]] = {}
        self._seen: dict[str, tuple[int, int]] = {}  # staging file -> (mtime_ns, size) when last hashed

    def __reduce__(self) -> tuple:
        """Pickled into ``tuner.pkl`` as a bare sealer: no key, no digests."""
        return StateSealer, ()

    def seal_tuner(self, location: str) -> None:
        """Seal the ``tuner.pkl`` a new Tuner just wrote into the Tune folder at ``location`` (path or URI)."""
        self.seal_folder(*tune_storage.filesystem(location))

    def seal_folder(self, fs: pafs.FileSystem, folder: str) -> None:
        """:meth:`seal_tuner` of the Tune folder ``folder`` on ``fs``."""
        self._open(fs, folder)
        with fs.open_input_stream(f"{folder}/tuner.pkl") as stream:
            self._add("tuner.pkl", digest(stream.read()))
        write_seal(fs, folder, load_or_create_key(), self._files)

    def on_step_begin(self, iteration: int, trials: list, **info: Any) -> None:
        """Find the Tune folder and staging folder through the first trial; seal any state saved since last step."""
        self._find_staging(trials)  # the first save happened in the step that added the trials
        self._refresh()

    def get_state(self) -> dict | None:
        """Tune's hook for callback state, called right after each save of the experiment state: seal it; no state
        of our own (a callback-states pickle would be one more file to seal)."""
        self._refresh(rehash=True)
        return None

    def on_experiment_end(self, trials: list, **info: Any) -> None:
        """Seal the final state (saved just before), also of a restored run that had nothing left to run (Tune then
        ends before its first step)."""
        self._find_staging(trials)
        self._refresh(rehash=True)

    def _find_staging(self, trials: list) -> None:
        """Bind to the Tune folder and the driver's staging folder, which the trials' storage names."""
        if self._staging is None and trials:
            storage = trials[0].storage
            self._open(storage.storage_filesystem, storage.experiment_fs_path)
            self._staging = Path(storage.experiment_driver_staging_path)

    def _open(self, fs: pafs.FileSystem, folder: str) -> None:
        """Bind to the Tune folder, taking over the digests of its seal (a resumed sweep's, verified before restore)."""
        if self._fs is None:
            self._fs, self._folder = fs, folder
            self._files = read_seal(fs, folder, load_or_create_key()) or self._files

    def _add(self, name: str, found: str) -> bool:
        """Record one version of a file; returns whether it is new."""
        kept = self._files.setdefault(name, [])
        if found in kept:
            return False
        kept[:] = [*kept, found][-KEPT_VERSIONS:]
        return True

    def _refresh(self, rehash: bool = False) -> None:
        """Hash the staging folder's state files (those whose time or size changed, or all with ``rehash``: right
        after a save) and rewrite the seal if any version is new."""
        if self._staging is None or self._fs is None or not self._staging.is_dir():
            return
        changed = False
        for path in self._staging.iterdir():
            if not (path.is_file() and unpickled(path.name)):
                continue
            info = path.stat()
            if rehash or self._seen.get(path.name) != (info.st_mtime_ns, info.st_size):
                self._seen[path.name] = (info.st_mtime_ns, info.st_size)
                changed |= self._add(path.name, digest(path.read_bytes()))
        if changed:
            write_seal(self._fs, self._folder, load_or_create_key(), self._files)
