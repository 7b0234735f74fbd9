"""The console's template tags that replaced per-row includes and loops: same HTML, escaped."""

from types import SimpleNamespace

from memory_console.templatetags.console import reach_options, scope_chip


def test_a_scope_chip_links_to_its_scope_and_shows_its_kind():
    html = scope_chip("team:acme/ops")
    assert html == (
        '<a class="chip chip-team" href="/scopes/team:acme/ops/" title="team:acme/ops">'
        '<span class="chip-kind">team</span><span class="chip-id">acme/ops</span></a>'
    )


def test_a_plain_chip_has_no_link_and_global_has_no_name():
    assert scope_chip("global", nolink=True) == (
        '<span class="chip chip-global" title="global"><span class="chip-kind">global</span></span>'
    )


def test_a_chip_escapes_the_token():
    html = scope_chip('team:a"<b>')
    assert "<b>" not in html and "&lt;b&gt;" in html and "&quot;" in html


def test_reach_options_mark_the_chosen_one_and_escape_labels():
    scopes = [
        SimpleNamespace(token="team:acme/ops", label="<b>Ops</b>"),
        SimpleNamespace(token="tenant:acme", label=""),
    ]
    html = reach_options(scopes, "tenant:acme")
    assert html == (
        '<option value="team:acme/ops">team:acme/ops — &lt;b&gt;Ops&lt;/b&gt;</option>'
        '<option value="tenant:acme" selected>tenant:acme</option>'
    )
    assert reach_options(scopes, None).count(" selected") == 0
