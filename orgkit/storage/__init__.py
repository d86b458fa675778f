"""Where the index lives: SQLite files in the state dir, or one PostgreSQL database.

SQLite is the embedded default and needs nothing. Setting `database.url`
(`ORGKIT_DATABASE_URL`, `postgresql://...`) puts the index in PostgreSQL with
pgvector instead, so many processes on many machines share one index. The
code above holds a connection in the sqlite3 call shape (`execute`,
`fetchone`, explicit transactions), which `postgres.PgConnection` gives a
psycopg connection; `backend.IndexBackend` is the one interface both engines
implement: their placeholder (`P`), how a statement is sent as written (`run`,
`run_many`, `among`, `insert_rows`), the queries that differ, and what each
can do.
"""
