"""The persistent index: files, nodes, links, passages, BM25 and vectors in SQLite or PostgreSQL."""

from .store import Index, default_state_dir
from .update import IndexBusy, UpdateStats, refresh, update

__all__ = ["Index", "IndexBusy", "UpdateStats", "default_state_dir", "refresh", "update"]
