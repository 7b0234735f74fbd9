"""Realistic multi-word texts and keys, generated from small word lists (deterministic)."""

import random

SUBJECTS = (
    "they",
    "the team",
    "finance",
    "the customer",
    "our region",
    "the manager",
    "support",
    "the user",
    "legal",
    "procurement",
    "the on-call engineer",
    "sales",
    "the board",
)
VERBS = (
    "prefer",
    "require",
    "report",
    "approve",
    "review",
    "schedule",
    "escalate",
    "archive",
    "summarise",
    "translate",
    "forward",
    "reconcile",
    "budget",
    "document",
    "encrypt",
)
OBJECTS = (
    "invoices",
    "travel bookings",
    "expense claims",
    "incident reports",
    "release notes",
    "quarterly forecasts",
    "meeting notes",
    "purchase orders",
    "contracts",
    "timesheets",
    "support tickets",
    "vendor quotes",
    "security reviews",
    "onboarding checklists",
    "distances",
    "deadlines",
    "customer emails",
    "payroll changes",
    "shipping labels",
)
TAILS = (
    "in kilometres",
    "before noon on Fridays",
    "in euros",
    "within two business days",
    "through the shared drive",
    "with the legal team in copy",
    "in British English",
    "after the weekly standup",
    "on the calendar year",
    "by the end of each month",
    "using the approved template",
    "only over the secure portal",
    "in plain language",
    "with a short executive summary",
    "for amounts above five thousand",
    "in Central time",
    "when the customer is in Europe",
    "unless the manager objects",
    "as a PDF attachment",
)
KEY_WORDS = (
    "units",
    "fiscal",
    "travel",
    "expense",
    "incident",
    "release",
    "forecast",
    "meeting",
    "purchase",
    "contract",
    "timesheet",
    "ticket",
    "vendor",
    "security",
    "onboarding",
    "language",
    "timezone",
    "currency",
    "approval",
    "archive",
    "privacy",
    "escalation",
    "format",
    "deadline",
    "payroll",
    "shipping",
    "holiday",
    "reporting",
    "summary",
    "tone",
)
KEY_ASPECTS = (
    "policy",
    "owner",
    "limit",
    "channel",
    "style",
    "window",
    "format",
    "region",
    "cadence",
    "threshold",
    "contact",
    "template",
    "review",
    "budget",
    "priority",
    "audience",
    "retention",
    "language",
    "approver",
    "tool",
)
# Words the texts are made of, for search queries that find something.
QUERY_WORDS = (
    "invoices",
    "travel",
    "expense",
    "incident",
    "contracts",
    "payroll",
    "forecasts",
    "deadlines",
    "security",
    "vendor",
    "shipping",
    "kilometres",
)
# Misspelt on purpose: the full-text tier finds nothing and the trigram tier answers.
TYPO_WORDS = ("invoises", "travle", "expnse", "incidnet", "contarcts", "payrol", "secruity")


def all_keys() -> list[str]:
    """Every key slug, in a fixed order (600 of them)."""
    return [f"{word}-{aspect}" for word in KEY_WORDS for aspect in KEY_ASPECTS]


def fact(rng: random.Random) -> str:
    return f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} {rng.choice(TAILS)}"


def query(rng: random.Random, typo: bool = False) -> str:
    words = [rng.choice(QUERY_WORDS), rng.choice(QUERY_WORDS)]
    if typo:
        words[0] = rng.choice(TYPO_WORDS)
    return " ".join(words)
