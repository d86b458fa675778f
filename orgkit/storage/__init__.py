"""Where the index lives: SQLite files in the state dir, or one PostgreSQL database.

SQLite is the embedded default and needs nothing. Setting `database.url`
(`ORGKIT_DATABASE_URL`, `postgresql://...`) puts the index in PostgreSQL with
pgvector instead, so many processes on many machines share one index. The
code above speaks the sqlite3 call shape (`?` placeholders, `execute`,
`executemany`, `fetchone`); `postgres.PgConnection` gives a psycopg
connection that shape, and `backend.IndexBackend` is the one interface both
engines implement: the few queries that differ, and what each can do.
"""
