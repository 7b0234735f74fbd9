"""The data of docs/architecture/data.md, one module per idea."""

from memory_core.models.access import AccessLog, ApiKey, ScopeGrant
from memory_core.models.capture import CaptureJob, Extraction
from memory_core.models.checkpoints import LedgerCheckpoint
from memory_core.models.digests import Digest, DigestLine
from memory_core.models.embeddings import Embedding
from memory_core.models.garden import (
    EvidenceRole,
    Proposal,
    ProposalEvidence,
    ProposalKind,
    ProposalState,
    ScopeHealth,
)
from memory_core.models.ledger import LedgerEvent
from memory_core.models.maintained import (
    ActorTurnHour,
    ChainConflict,
    ConflictPair,
    ScopeCount,
    TenantTurnHour,
)
from memory_core.models.memories import Author, Memory, RetiredReason
from memory_core.models.scopes import Actor, Membership, Scope
from memory_core.models.throttle import LoginAttempt
from memory_core.models.transcripts import Message, Thread

__all__ = [
    "AccessLog",
    "Actor",
    "ActorTurnHour",
    "ApiKey",
    "CaptureJob",
    "ChainConflict",
    "ConflictPair",
    "Author",
    "Digest",
    "DigestLine",
    "Embedding",
    "EvidenceRole",
    "Extraction",
    "LedgerCheckpoint",
    "LedgerEvent",
    "LoginAttempt",
    "Membership",
    "Memory",
    "Message",
    "Proposal",
    "ProposalEvidence",
    "ProposalKind",
    "ProposalState",
    "RetiredReason",
    "Scope",
    "ScopeCount",
    "ScopeGrant",
    "ScopeHealth",
    "TenantTurnHour",
    "Thread",
]
