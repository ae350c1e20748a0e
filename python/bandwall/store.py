"""The SQLite store: a meta table with the schema version, a few indexed columns, the whole record.

A database that is corrupt, foreign or of another version is refused with one line and never
written to. Writers take an immediate transaction and wait for each other (busy timeout).
"""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import platformdirs

from bandwall.errors import StoreError

APPLICATION = "bandwall"
STORE_VERSION = 1
BUSY_TIMEOUT_S = 30.0

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
    env = os.environ.get("BANDWALL_DB")
    if env:
        return Path(env)
    return Path(platformdirs.user_data_dir("bandwall")) / "bandwall.db"


class Store:
    """Records in one SQLite file. Use as a context manager or call close()."""

    def __init__(self, path: str | os.PathLike | None = None):
        self.path = Path(path) if path else default_path()
        if self.path.is_dir():
            raise StoreError(f"database {str(self.path)!r} is a directory")
        fresh = not self.path.exists() or self.path.stat().st_size == 0
        if fresh:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as e:
                raise StoreError(f"cannot create database folder {str(self.path.parent)!r}: {e.strerror}") from e
        try:
            self.conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        except sqlite3.Error as e:
            raise StoreError(f"cannot open database {str(self.path)!r}: {e}") from e
        try:
            if fresh:
                self._create()
            else:
                self._check()
        except BaseException:
            self.conn.close()
            raise

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        self.conn.close()

    def _create(self) -> None:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            have = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if not have:
                for stmt in _CREATE:
                    self.conn.execute(stmt)
                self.conn.executemany("INSERT INTO meta VALUES (?, ?)",
                                      [("application", APPLICATION), ("store_version", str(STORE_VERSION))])
            self.conn.execute("COMMIT")
        except sqlite3.Error as e:
            self._rollback()
            raise StoreError(f"cannot create database {str(self.path)!r}: {e}") from e
        self._check()

    def _check(self) -> None:
        try:
            tables = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
            if "meta" not in tables or "records" not in tables:
                raise StoreError(f"database {str(self.path)!r} is not a bandwall database")
            meta = dict(self.conn.execute("SELECT key, value FROM meta"))
        except sqlite3.DatabaseError as e:
            raise StoreError(f"database {str(self.path)!r} is not a bandwall database or is corrupt: {e}") from e
        if meta.get("application") != APPLICATION:
            raise StoreError(f"database {str(self.path)!r} is not a bandwall database")
        version = meta.get("store_version")
        if version != str(STORE_VERSION):
            raise StoreError(f"database {str(self.path)!r} has store version {version!r}; "
                             f"this bandwall reads version {STORE_VERSION}")

    def _rollback(self) -> None:
        try:
            self.conn.execute("ROLLBACK")
        except sqlite3.Error:
            pass

    def add(self, record: dict) -> int:
        """Stores one record; returns its id."""
        prov = record.get("provenance", {})
        row = (record["tool"], prov.get("date", ""), prov.get("host", ""), prov.get("git_revision", ""),
               1 if record.get("validation", {}).get("passed") else 0, json.dumps(record, sort_keys=True))
        try:
            self.conn.execute("BEGIN IMMEDIATE")
            cur = self.conn.execute(
                "INSERT INTO records (tool, date, host, git_revision, passed, record) VALUES (?,?,?,?,?,?)", row)
            self.conn.execute("COMMIT")
        except sqlite3.Error as e:
            self._rollback()
            raise StoreError(f"cannot write to database {str(self.path)!r}: {e}") from e
        return int(cur.lastrowid)

    def list(self, tool: str | None = None, limit: int | None = None) -> list[dict]:
        """Records, newest first, each with its id under "id"."""
        sql = "SELECT id, record FROM records"
        args: list = []
        if tool:
            sql += " WHERE tool = ?"
            args.append(tool)
        sql += " ORDER BY id DESC"
        if limit:
            sql += " LIMIT ?"
            args.append(limit)
        return [self._row(r) for r in self._query(sql, args)]

    def get(self, record_id: int) -> dict:
        rows = self._query("SELECT id, record FROM records WHERE id = ?", [record_id])
        if not rows:
            raise StoreError(f"no record with id {record_id} in {str(self.path)!r}")
        return self._row(rows[0])

    def _query(self, sql: str, args: list) -> list:
        try:
            return self.conn.execute(sql, args).fetchall()
        except sqlite3.Error as e:
            raise StoreError(f"cannot read database {str(self.path)!r}: {e}") from e

    @staticmethod
    def _row(row) -> dict:
        record = json.loads(row[1])
        record["id"] = row[0]
        return record


def save(record: dict, db: str | os.PathLike | None = None) -> int:
    """Opens the store at db (or the default), adds record, closes; returns the record's id."""
    with Store(db) as store:
        return store.add(record)
