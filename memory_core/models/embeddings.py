"""Embeddings: one vector per memory version, for the semantic half of search.

A vector is derived from the version's key and text, so it is as private as the text: it
is deleted with its version (a forget erases it; the foreign key cascades in the database,
whatever deletes the row). It lives in a table of its own so that the many reads of memory
rows never carry a kilobyte of floats they do not use.

Every version has a row from the moment it is written. A row whose vector is NULL is
pending: the embedder failed or was not reachable when the version was written, and
`manage.py embed_pending` (or the next write that embeds) fills it in. `embedder` and
`dims` name what made the vector; a search compares only vectors made by the embedder it
embeds its query with, so a change of model never compares one model's vectors with
another's (`manage.py reembed` rebuilds them).
"""

from django.db import models
from django.db.models import F, Func, Q
from django.db.models.lookups import Exact, GreaterThan
from pgvector.django import VectorField


class Embedding(models.Model):
    # No database constraint from Django: migration 0008 declares the foreign key itself,
    # ON DELETE CASCADE, so a vector cannot outlive its version even under raw SQL.
    memory = models.OneToOneField(
        "memory_core.Memory",
        primary_key=True,
        on_delete=models.CASCADE,
        related_name="embedding",
        db_constraint=False,
    )
    # Which embedder made the vector: its name and version ("wordllama:l2_supercat_256@0.4.0").
    embedder = models.CharField(max_length=200, null=True, blank=True)
    dims = models.PositiveSmallIntegerField(null=True, blank=True)
    # Dimensions are not fixed in the column: an embedder switch writes another width.
    vector = VectorField(null=True, blank=True)
    embedded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # Pending (nothing) or embedded (everything): never a vector without its maker.
            models.CheckConstraint(
                condition=Q(
                    embedder__isnull=True,
                    dims__isnull=True,
                    vector__isnull=True,
                    embedded_at__isnull=True,
                )
                | Q(
                    embedder__isnull=False,
                    dims__isnull=False,
                    vector__isnull=False,
                    embedded_at__isnull=False,
                ),
                name="embedding_all_or_nothing",
            ),
            # The stored width is the vector's width.
            models.CheckConstraint(
                condition=Q(vector__isnull=True)
                | Exact(Func(F("vector"), function="vector_dims"), F("dims")),
                name="embedding_dims_match",
            ),
            # A zero vector has no direction: cosine distance to it is undefined (NaN).
            # pgvector itself refuses NaN and infinite components.
            models.CheckConstraint(
                condition=Q(vector__isnull=True)
                | GreaterThan(
                    Func(F("vector"), function="vector_norm", output_field=models.FloatField()),
                    0,
                ),
                name="embedding_vector_nonzero",
            ),
        ]
        indexes = [
            # embed_pending and the write paths find pending rows without a scan.
            models.Index(
                fields=["memory"], condition=Q(vector__isnull=True), name="embedding_pending_idx"
            ),
        ]
