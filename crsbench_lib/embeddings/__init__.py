"""Batched embedding extraction with an on-disk, self-verifying cache."""

from crsbench_lib.embeddings.store import EmbeddingStore, cache_key

__all__ = ["EmbeddingStore", "cache_key"]
