"""Breadcrumbs on the thread and run pages: scope trail, actor, then the thread or run,
with links only where the user may read."""

import re

import pytest

from memory_core import transcripts, turns


@pytest.fixture
def talk(org):
    transcripts.record_message(org.u1, "t-1", "user", "hi", principal=org.acme_agent, run_id="r-1")
    turns.resolve_turn(org.u1, "r-1", principal=org.acme_agent, thread_id="t-1")


def _trail(text: str) -> str:
    return re.search(r'<nav class="trail" aria-label="Where">(.*?)</nav>', text, re.S).group(1)


@pytest.mark.parametrize("path", ["/threads/t-1/", "/runs/acme/u1/r-1/"])
def test_trail_links_readable_scopes_and_names_the_rest(client, users, talk, path):
    client.force_login(users.owner)
    trail = _trail(client.get(path).content.decode())
    # The owner administers tenant:acme, not the global scope above it.
    assert 'href="/scopes/tenant:acme/"' in trail
    assert 'href="/scopes/global/"' not in trail and "chip-global" in trail
    assert 'href="/actors/acme/u1/"' in trail


def test_superuser_trail_links_every_scope(client, users, talk):
    client.force_login(users.su)
    trail = _trail(client.get("/runs/acme/u1/r-1/").content.decode())
    assert 'href="/scopes/global/"' in trail and 'href="/runs/?actor=acme%2Fu1"' in trail
    assert trail.rstrip().endswith("<span>r-1</span>")


def test_thread_trail_ends_with_the_thread_and_links_the_actors_conversations(client, users, talk):
    client.force_login(users.auditor)
    trail = _trail(client.get("/threads/t-1/").content.decode())
    assert 'href="/threads/?actor=acme%2Fu1"' in trail
    assert trail.rstrip().endswith("<span>t-1</span>")


def test_thread_id_shared_by_several_actors_has_a_short_trail(client, users, org, talk):
    transcripts.record_message(org.u2, "t-1", "user", "yo", principal=org.acme_agent)
    client.force_login(users.owner)
    trail = _trail(client.get("/threads/t-1/").content.decode())
    assert 'href="/threads/"' in trail and "/actors/" not in trail
