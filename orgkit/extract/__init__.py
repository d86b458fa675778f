"""Grounded extraction: schemas, runs (extractor -> scribe -> auditor), and audits."""
