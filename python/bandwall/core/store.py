"""The SQLite store: a meta table with the store version, a few indexed columns, the whole record.

A database that is corrupt, foreign, of another version, not a regular file, unreadable or locked
for longer than the busy timeout is refused with one line (StoreError, exit 2) and never written
to: every check only reads, and a file is created only where nothing exists yet. A database the
user names (--db, $BANDWALL_DB) must be in a folder that exists: bandwall makes only the folder of
its default database, so a mistyped path is refused instead of growing folders. Writers take an
immediate transaction and wait for each other up to the busy timeout ($BANDWALL_DB_TIMEOUT
seconds, default 30), so two processes adding records at once lose nothing.
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

import platformdirs

from bandwall.core import records
from bandwall.core.errors import StoreError, UsageError

APPLICATION = "bandwall"
STORE_VERSION = 1
BUSY_TIMEOUT_S = 30.0
SQLITE_MAGIC = b"SQLite format 3\x00"

_CREATE = [
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    """CREATE TABLE records (
         id INTEGER PRIMARY KEY AUTOINCREMENT,
         tool TEXT NOT NULL,
         date TEXT NOT NULL,
         host TEXT NOT NULL,
         git_revision TEXT NOT NULL,
         passed INTEGER NOT NULL,
         record TEXT NOT NULL)""",
    "CREATE INDEX records_tool ON records(tool)",
    "CREATE INDEX records_date ON records(date)",
]


def default_path() -> Path:
    """$BANDWALL_DB, else bandwall.db in the user's data directory."""
    env = os.environ.get("BANDWALL_DB")
    if env:
        return Path(env)
    return _data_dir_path()


def _data_dir_path() -> Path:
    return Path(platformdirs.user_data_dir("bandwall")) / "bandwall.db"


def busy_timeout() -> float:
    """Seconds a connection waits for another process's lock: $BANDWALL_DB_TIMEOUT or 30."""
    text = os.environ.get("BANDWALL_DB_TIMEOUT")
    if text is None or text == "":
        return BUSY_TIMEOUT_S
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0 or value == float("inf"):
        raise UsageError(f"BANDWALL_DB_TIMEOUT={text!r} is not a number of seconds >= 0")
    return value


def _is_busy(e: sqlite3.Error) -> bool:
    name = getattr(e, "sqlite_errorname", "")
    return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in str(e)


class Store:
    """Records in one SQLite file. Use as a context manager or call close().

    readonly=True never creates or writes anything; a database that does not exist yet then reads
    as an empty store, unless must_exist refuses it (what `bandwall db` does: listing a mistyped
    path is an error, not an empty answer). A path given here or in $BANDWALL_DB whose folder does
    not exist is refused: only the default database's folder is made.
    """

    def __init__(
        self, path: str | os.PathLike | None = None, readonly: bool = False, must_exist: bool = False
    ):
        self.path = Path(path) if path else default_path()
        self.readonly = readonly
        self.timeout = busy_timeout()
        self.name = repr(str(self.path))
        fresh = self.fresh = self._inspect()
        if fresh and not self.path.exists():
            self._refuse_missing(must_exist and readonly)
        if fresh and readonly:
            self.conn = sqlite3.connect(":memory:", isolation_level=None)
            self._create()
            return
        if fresh:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(f"cannot create the folder of database {self.name}: {e.strerror}") from e
        uri = f"file:{quote(str(self.path.absolute()))}?mode={'ro' if readonly else 'rwc'}"
        try:
            self.conn = sqlite3.connect(uri, uri=True, timeout=self.timeout, isolation_level=None)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open database {self.name}: {e}") from e
        try:
            if fresh:
                self._create()
            self._check()
        except BaseException:
            self.conn.close()
            raise

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    # -- opening ---------------------------------------------------------------------------------

    def _inspect(self) -> bool:
        """True when there is no database yet (no file, or an empty one); refuses what is not SQLite."""
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return True
        except OSError as e:
            raise StoreError(f"cannot open database {self.name}: {e.strerror}") from e
        if self.path.is_dir():
            raise StoreError(f"database {self.name} is a directory")
        if not self.path.is_file():
            raise StoreError(f"database {self.name} is not a regular file")
        if st.st_size == 0:
            return True
        try:
            with open(self.path, "rb") as f:
                head = f.read(len(SQLITE_MAGIC))
        except OSError as e:
            raise StoreError(f"cannot read database {self.name}: {e.strerror}") from e
        if head != SQLITE_MAGIC:
            raise StoreError(f"database {self.name} is not an SQLite file (corrupt or another kind of file)")
        return False

    def _refuse_missing(self, must_exist: bool) -> None:
        """For a database file that does not exist: refuses a named path in a missing folder, and
        any missing database when must_exist."""
        folder = self.path.absolute().parent
        default = self.path.absolute() == _data_dir_path().absolute()
        if not default and not folder.is_dir():
            raise StoreError(f"database {self.name} does not exist: no folder {str(folder)!r}")
        if must_exist:
            raise StoreError(
                f"database {self.name} does not exist" + (": no record was stored yet" if default else "")
            )

    def _create(self) -> None:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            have = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not have:  # another process may have created it meanwhile; then _check judges it
                for stmt in _CREATE:
                    self.conn.execute(stmt)
                self.conn.executemany(
                    "INSERT INTO meta VALUES (?, ?)",
                    [("application", APPLICATION), ("store_version", str(STORE_VERSION))],
                )
            self.conn.execute("COMMIT")
        except sqlite3.Error as e:
            self._rollback()
            raise self._error("cannot create database", e) from e

    def _check(self) -> None:
        """Reads the meta table in one read transaction. SQLite itself refuses a truncated file (its
        header's page count exceeds the file) as malformed when the transaction starts."""
        try:
            self.conn.execute("BEGIN")
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "meta" not in tables or "records" not in tables:
                raise StoreError(f"database {self.name} is not a bandwall database")
            meta = dict(self.conn.execute("SELECT key, value FROM meta"))
            self.conn.execute("COMMIT")
        except sqlite3.Error as e:
            self._rollback()
            raise self._error("cannot read database", e) from e
        except BaseException:
            self._rollback()
            raise
        if meta.get("application") != APPLICATION:
            raise StoreError(f"database {self.name} is not a bandwall database")
        version = meta.get("store_version")
        if version != str(STORE_VERSION):
            raise StoreError(
                f"database {self.name} has store version {version}; "
                f"this bandwall reads version {STORE_VERSION} only"
            )

    def _error(self, what: str, e: sqlite3.Error) -> StoreError:
        if _is_busy(e):
            return StoreError(
                f"database {self.name} is locked by another process "
                f"(waited {self.timeout:g} s; BANDWALL_DB_TIMEOUT sets the wait)"
            )
        if isinstance(e, sqlite3.DatabaseError) and not isinstance(e, sqlite3.OperationalError):
            return StoreError(f"database {self.name} is corrupt or not a bandwall database: {e}")
        return StoreError(f"{what} {self.name}: {e}")

    def _rollback(self) -> None:
        try:
            if self.conn.in_transaction:
                self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    # -- records ---------------------------------------------------------------------------------

    def add(self, record: dict) -> int:
        """Validates and stores one record; returns its id."""
        if self.readonly:
            raise StoreError(f"database {self.name} is open read-only")
        record = {k: v for k, v in records.validate(record).items() if k != "id"}
        prov = record["provenance"]
        row = (
            record["tool"],
            prov["date"],
            prov["host"],
            prov["git_revision"],
            1 if records.passed(record) else 0,
            json.dumps(record, sort_keys=True),
        )
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            cur = self.conn.execute(
                "INSERT INTO records (tool, date, host, git_revision, passed, record) VALUES (?,?,?,?,?,?)",
                row,
            )
            self.conn.execute("COMMIT")
        except sqlite3.Error as e:
            self._rollback()
            raise self._error("cannot write to database", e) from e
        return int(cur.lastrowid)

    def list(
        self, tool: str | None = None, limit: int | None = None, oldest_first: bool = False
    ) -> list[dict]:
        """Records, newest first (or oldest first), each with its id under "id"."""
        sql = "SELECT id, record FROM records"
        args: list = []
        if tool:
            sql += " WHERE tool = ?"
            args.append(tool)
        sql += " ORDER BY id " + ("ASC" if oldest_first else "DESC")
        if limit:
            sql += " LIMIT ?"
            args.append(limit)
        return [self._row(r) for r in self._query(sql, args)]

    def get(self, record_id: int) -> dict:
        rows = self._query("SELECT id, record FROM records WHERE id = ?", [record_id])
        if not rows:
            raise StoreError(f"no record with id {record_id} in database {self.name}")
        return self._row(rows[0])

    def count(self) -> int:
        return int(self._query("SELECT count(*) FROM records", [])[0][0])

    def _query(self, sql: str, args: list) -> list:
        try:
            return self.conn.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise self._error("cannot read database", e) from e

    def _row(self, row) -> dict:
        try:
            record = json.loads(row[1])
        except json.JSONDecodeError as e:
            raise StoreError(f"record {row[0]} in database {self.name} is not valid JSON: {e}") from e
        record["id"] = row[0]
        return record


def check(db: str | os.PathLike | None = None) -> None:
    """Refuses (StoreError, exit 2) a database that could not take a record, before a command spends
    a run on it: whatever opening refuses (corrupt, foreign, another version, locked, not a regular
    file, unreadable, a named path in a folder that does not exist), a database or folder that
    cannot be written, and a default folder that cannot be made. Only reads: creates nothing."""
    with Store(db, readonly=True) as s:
        path, name, fresh = s.path, s.name, s.fresh
    if not fresh and not os.access(path, os.W_OK):
        raise StoreError(f"database {name} is read-only: records cannot be stored in it")
    folder = path.absolute().parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir():
        raise StoreError(f"cannot create the folder of database {name}: {str(folder)!r} is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise StoreError(f"cannot store records in database {name}: folder {str(folder)!r} is not writable")


class Series:
    """The records of a series (a sweep's points, say) stored as each finishes, unless no_store;
    the database is checked first, and ids keeps their ids in order. Call it with each record."""

    def __init__(self, db: str | os.PathLike | None = None, no_store: bool = False):
        self.db, self.no_store = db, no_store
        self.ids: list[int] = []
        self.records: list[dict] = []
        if not no_store:
            check(db)

    def __call__(self, record: dict) -> None:
        self.records.append(record)
        if not self.no_store:
            self.ids.append(save(record, self.db))


def save(record: dict, db: str | os.PathLike | None = None) -> int:
    """Opens the store at db (or the default), adds record, closes; returns the record's id."""
    with Store(db) as store:
        return store.add(record)
