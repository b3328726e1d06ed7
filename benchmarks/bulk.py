"""Bulk loading of the benchmarks' synthetic rows: the database's own
loader (``LOAD DATA LOCAL INFILE`` on MariaDB, ``COPY ... FROM STDIN`` on
PostgreSQL) fed with tab-separated text.

An ``executemany`` of millions of rows spends its time in the driver
quoting each value (PyMySQL: 80% of a 1M-allocation population); the
loaders parse plain text on the server side.  Rows are dicts with the same
keys, as :func:`common.lease_row` gives them; :func:`without_indexes`
builds a table's secondary indexes once, after its load.
"""

import contextlib
import datetime
import json
import os
import tempfile

from climate.tests.functional import procs

_ESCAPES = str.maketrans({'\\': '\\\\', '\t': '\\t', '\n': '\\n',
                          '\r': '\\r'})


def _text(value, mysql):
    if value is None:
        return '\\N'
    if value is True or value is False:
        return ('1' if value else '0') if mysql else (
            't' if value else 'f')
    if isinstance(value, datetime.datetime):
        return value.isoformat(' ')
    if isinstance(value, (dict, list)):
        value = json.dumps(value)
    elif not isinstance(value, str):
        return str(value)
    return value.translate(_ESCAPES)


def load(db, table, rows):
    """Insert ``rows`` (dicts with the same keys) into ``table`` (a
    SQLAlchemy Table) of ``db`` (``procs.Database``) in one load."""
    if not rows:
        return
    columns = list(rows[0])
    mysql = db.engine_name != procs.POSTGRESQL
    lines = ''.join('\t'.join(_text(row[c], mysql) for c in columns) + '\n'
                    for row in rows)
    if mysql:
        _load_mysql(db, table.name, columns, lines)
    else:
        _copy_postgresql(db, table.name, columns, lines)


def _load_mysql(db, name, columns, lines):
    import pymysql
    url = db.engine.url
    with tempfile.NamedTemporaryFile('w', suffix='.tsv',
                                     delete=False) as out:
        out.write(lines)
    try:
        conn = pymysql.connect(host=url.host, port=url.port or 3306,
                               user=url.username, password=url.password or '',
                               database=url.database, local_infile=True,
                               charset='utf8mb4')
        try:
            with conn.cursor() as cursor:
                # the rows are made unique by their maker: no need to
                # check each against the unique indexes as it goes in
                cursor.execute('SET unique_checks = 0')
                cursor.execute(
                    "LOAD DATA LOCAL INFILE %%s INTO TABLE `%s` "
                    "CHARACTER SET utf8mb4 FIELDS TERMINATED BY '\\t' "
                    "ESCAPED BY '\\\\' LINES TERMINATED BY '\\n' (%s)" % (
                        name, ', '.join('`%s`' % c for c in columns)),
                    (out.name,))
            conn.commit()
        finally:
            conn.close()
    finally:
        os.unlink(out.name)


def _copy_postgresql(db, name, columns, lines):
    import io
    raw = db.engine.raw_connection()
    try:
        with raw.cursor() as cursor:
            cursor.copy_expert('COPY "%s" (%s) FROM STDIN' % (
                name, ', '.join('"%s"' % c for c in columns)),
                io.StringIO(lines))
        raw.commit()
    finally:
        raw.close()


@contextlib.contextmanager
def without_indexes(db, table):
    """Drop the secondary indexes of ``table`` for a bulk load and build
    them again after it: one sort per index instead of a random insert
    per row into each (the ledger's bookings have five)."""
    # (MariaDB keeps the index a foreign key needs)
    keys = {fk.parent.name for fk in table.foreign_keys}
    indexes = sorted((index for index in table.indexes
                      if next(iter(index.columns)).name not in keys),
                     key=lambda index: index.name)
    with db.engine.begin() as conn:
        for index in indexes:
            index.drop(conn)
    try:
        yield
    finally:
        with db.engine.begin() as conn:
            for index in indexes:
                index.create(conn)
