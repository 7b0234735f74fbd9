"""Memories: one keyed fact at one scope, never edited, only superseded, retired or forgotten."""

import uuid

import pgtrigger
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Q
from django.db.models.functions import Now

from memory_core.models.guards import Protect, ReadOnly, erased_actor_guard, no_truncate
from memory_core.rules.ids import memory_id

KEY_REGEX = r"^[a-z0-9][a-z0-9._-]{0,63}$"
# The text search configuration behind the stored tsvector and every fts query.
TS_CONFIG = "english"
# ... and behind the second one (migration 0024_multilingual_search): every word as it is
# written, lower case and without accents, in any language (`simple` after `unaccent`).
# Search matches a query's content words against both (memory_core/recall/search.py).
SIMPLE_TS_CONFIG = "memory_simple_unaccent"


class Author(models.TextChoices):
    HUMAN = "human"
    AGENT = "agent"


class RetiredReason(models.TextChoices):
    SUPERSEDED = "superseded"
    INVALIDATED = "invalidated"
    PROMOTED = "promoted"


class MemoryQuerySet(models.QuerySet):
    def live(self, now=None):
        """Not retired and not expired: what precedence and selection may see."""
        expiry = Q(expires_at__isnull=True) | Q(expires_at__gt=now if now is not None else Now())
        return self.filter(retired_at__isnull=True).filter(expiry)

    def in_chain(self, chain):
        """Rows at the given scopes only. Every read for an actor starts here (privacy first)."""
        return self.filter(scope__token__in=list(chain))


class Memory(models.Model):
    uid = models.CharField(max_length=40, unique=True, default=memory_id, editable=False)
    # No index of its own: memory_one_live_per_scope_key (the chain read's index) and
    # memory_scope_recent_idx both lead with scope.
    scope = models.ForeignKey(
        "memory_core.Scope", on_delete=models.PROTECT, related_name="memories", db_index=False
    )
    key = models.CharField(max_length=64)
    text = models.TextField()
    pinned = models.BooleanField(default=False)
    tags = ArrayField(models.CharField(max_length=40), default=list, blank=True)
    author = models.CharField(max_length=8, choices=Author.choices)
    # Origin. For an agent: the actor it worked for and the thread / run / tool call.
    # For a person: their username (a string, so deleting a user never rewrites history).
    origin_actor = models.ForeignKey(
        "memory_core.Actor",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="authored_memories",
    )
    origin_thread = models.CharField(max_length=128, null=True, blank=True)
    origin_run = models.CharField(max_length=128, null=True, blank=True)
    origin_tool_call = models.CharField(max_length=128, null=True, blank=True)
    origin_user = models.CharField(max_length=150, null=True, blank=True)
    # Every version of one memory shares this id; forget erases by it.
    lineage = models.UUIDField(default=uuid.uuid4, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    retired_at = models.DateTimeField(null=True, blank=True)
    retired_reason = models.CharField(
        max_length=16, choices=RetiredReason.choices, blank=True, default=""
    )
    retired_note = models.CharField(max_length=500, blank=True, default="")
    retired_by = models.CharField(max_length=200, blank=True, default="")
    supersedes = models.OneToOneField(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="superseded_by"
    )
    promoted_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="promotions"
    )
    search = models.GeneratedField(
        expression=SearchVector("key", weight="A", config=TS_CONFIG)
        + SearchVector("text", weight="B", config=TS_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )
    # The same words unstemmed and unaccented: what matches a Portuguese, Spanish or German
    # word, and a word typed with or without its accents. Search ranks a chain's few hundred
    # rows (no index: it never starts from one, see recall/search.py).
    search_simple = models.GeneratedField(
        expression=SearchVector("key", weight="A", config=SIMPLE_TS_CONFIG)
        + SearchVector("text", weight="B", config=SIMPLE_TS_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    objects = MemoryQuerySet.as_manager()

    class Meta:
        ordering = ["scope", "key", "-created_at"]
        constraints = [
            # One live answer per question per scope; corrections supersede, never coexist.
            # It also carries what a turn's selection reads of every live row of a chain
            # (applied.SELECTED_IN_CHAIN), so that read is an index-only scan: the heap is
            # visited only for the ~40 rows a turn shows, not the chain's ~540.
            models.UniqueConstraint(
                fields=["scope", "key"],
                condition=Q(retired_at__isnull=True),
                include=["pinned", "created_at", "expires_at", "id"],
                name="memory_one_live_per_scope_key",
            ),
            # remember is idempotent per (run, tool call): a retried tool call writes once.
            models.UniqueConstraint(
                fields=["origin_actor", "origin_run", "origin_tool_call"],
                condition=Q(origin_run__isnull=False, origin_tool_call__isnull=False),
                name="memory_one_write_per_tool_call",
            ),
            models.CheckConstraint(condition=Q(key__regex=KEY_REGEX), name="memory_key_shape"),
            # A memory is one line of text: it is rendered as one line of a prompt.
            models.CheckConstraint(
                condition=Q(text__regex=r"^[^\r\n]+$"), name="memory_text_one_line"
            ),
            # A retired row says why; a live row says nothing.
            models.CheckConstraint(
                condition=Q(retired_at__isnull=True, retired_reason="")
                | Q(retired_at__isnull=False) & ~Q(retired_reason=""),
                name="memory_retired_has_reason",
            ),
            # The origin matches the author: agents act for an actor, people are named.
            models.CheckConstraint(
                condition=Q(author=Author.AGENT, origin_actor__isnull=False)
                | Q(author=Author.HUMAN, origin_user__isnull=False),
                name="memory_origin_matches_author",
            ),
        ]
        indexes = [
            # Forget collects a memory's every version by lineage.
            models.Index(fields=["lineage"], name="memory_lineage_idx"),
            # Read-back filtered by thread: memories an actor's agent learned in one thread.
            models.Index(fields=["origin_actor", "origin_thread"], name="memory_origin_thread_idx"),
            # Scope pages list a scope's memories newest first.
            models.Index(fields=["scope", "-created_at"], name="memory_scope_recent_idx"),
            # The console's memory finder (memory_console/console/finder.py): every readable
            # memory newest (or oldest) first; by key; the pinned ones; the retired ones by
            # reason; the expired ones; by tag. Each keeps a page and its capped count off a
            # walk of every row at a million memories.
            models.Index(fields=["-created_at", "-id"], name="memory_recent_idx"),
            models.Index(fields=["key", "-created_at", "-id"], name="memory_key_recent_idx"),
            models.Index(
                fields=["-created_at", "-id"],
                condition=Q(pinned=True),
                name="memory_pinned_recent_idx",
            ),
            models.Index(
                fields=["retired_reason", "-created_at", "-id"],
                condition=Q(retired_at__isnull=False),
                name="memory_retired_recent_idx",
            ),
            models.Index(
                fields=["expires_at"],
                condition=Q(retired_at__isnull=True, expires_at__isnull=False),
                name="memory_expiry_idx",
            ),
            GinIndex(fields=["tags"], name="memory_tags_gin"),
            # Full-text tier of search.
            GinIndex(fields=["search"], name="memory_search_gin"),
            # Trigram tier of search (typos inside a longer fact).
            GinIndex(OpClass("text", name="gin_trgm_ops"), name="memory_text_trgm"),
        ]
        triggers = [
            # No memory of or by an erased person: an agent's names its actor; a person's
            # write at an actor's own scope names that actor through the scope.
            erased_actor_guard(
                "memory_not_of_erased_actor",
                # (One index probe either way: an OR here would scan in a generic plan.)
                "FROM memory_core_actor a WHERE a.id = COALESCE(NEW.origin_actor_id,"
                " (SELECT s.id FROM memory_core_actor s WHERE s.scope_id = NEW.scope_id))",
            ),
            # The fact, its place and its provenance never change after insert: a correction
            # is a new row. Raw SQL is refused as well as the ORM.
            ReadOnly(
                name="memory_fields_immutable",
                fields=[
                    "key",
                    "text",
                    "scope",
                    "author",
                    "origin_actor",
                    "origin_thread",
                    "origin_run",
                    "origin_tool_call",
                    "origin_user",
                    "lineage",
                    "created_at",
                    "uid",
                ],
            ),
            # Rows leave only through the forget service, which names this trigger in
            # pgtrigger.ignore; any other DELETE (raw SQL included) is refused.
            Protect(name="memory_delete_only_by_forget", operation=pgtrigger.Delete),
            no_truncate("memory_no_truncate", "memory rows leave only through forget"),
        ]

    def __str__(self):
        return self.uid
