"""Agent memory: deposit -> librarian -> review (or admission by policy) -> recall.

`deposit` writes a finding as a new note with its audit record; the `librarian`
turns it into `proposals`; `review` and `admission` resolve them through the one
`resolver` (batches, undo, crash repair); `recall` gives context with provenance.
`worker` picks up unfinished work, `watch` takes in notes of watched folders,
`store` keeps it all in the data dir, and `health` is doctor's check of it.
"""
