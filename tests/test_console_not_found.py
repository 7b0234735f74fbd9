"""An address that names no page of the console answers the console's own 404 page: the
console's layout and a way back, logged in or not, still status 404, the address shown
back escaped, and nothing about how the site is routed. Under /api/ and /mcp/ a 404 stays
JSON."""

from tests.helpers import login

HOSTILE = "/no-such-page/<script>alert(1)</script>/"


def test_an_unknown_address_is_the_consoles_404_page_when_logged_out(client, db):
    response = client.get(HOSTILE)
    assert response.status_code == 404
    assert [t.name for t in response.templates][:2] == ["404.html", "base.html"]
    page = response.content.decode()
    assert '<header class="topbar">' in page and "Skip to content" in page
    assert '<a href="/login/">Log in to the console</a>' in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert" not in page
    # Nobody logged in: no menu, no way to tell which pages exist.
    assert 'class="mainnav"' not in page and "Log out" not in page


def test_an_unknown_address_is_the_consoles_404_page_when_logged_in(client, users):
    response = login(client, users.owner).get("/scopes-typo/")
    assert response.status_code == 404
    page = response.content.decode()
    assert 'class="mainnav"' in page and "Log out" in page
    assert '<a href="/">Back to the dashboard</a>' in page
    assert "Nothing here, or nothing you may see." in page
    assert 'You asked for <code class="line">/scopes-typo/</code>.' in page


def test_the_404_page_says_nothing_of_the_routes_or_the_error(client, users):
    page = login(client, users.su).get("/memories/mem_x/y/z/").content.decode()
    for leak in ("urlpatterns", "URLconf", "Resolver404", "Traceback", "tried", "memory_console"):
        assert leak not in page


def test_a_404_under_the_api_and_mcp_is_still_json(client, db):
    for path in ("/api/v2/nothing", "/mcp/nothing"):
        response = client.get(path)
        assert response.status_code == 404
        assert response["Content-Type"].startswith("application/json")
