"""Retrieval: the sparse headline scan and the deep read by ID."""
