"""The admin console: server-rendered pages with htmx fragments (docs/administrators/console.md).

One folder per area. Each area of the console is a package here, and its templates are the
folder of the same name under templates/console/:

    dashboard/  the dashboard                      ledger/  the ledger, the access log,
    scopes/     the scope tree, one scope, publish          their exports, the chain check
    actors/     the actor search, one actor,       garden/  gardening proposals, decisions
                its block preview, its erasure     keys/    API keys
    memories/   one memory, its actions            users/   users and grants (superusers)
    finder/     the memory finder, bulk actions    common/  what several areas share
    conflicts/  the conflicts page, its decisions
    runs/       runs, conversations, attribution

A new page touches its area's folder, its templates' folder and urls.py (every address of
the console, docs/administrators/console.md "Addresses"), nothing else.

Inside an area, a module per layer, always under the same name:

- views.py: function views, one per page or action. A view reads the request through a
  form, looks things up through common/access.py (a thing outside the user's grants is a
  logged 404), calls the area's reads or ONE memory_core service, renders the page (or, for
  htmx, its fragment: common/rendering.py) and writes its access-log row. It makes no ORM
  call of its own. Views that outgrow a few hundred lines are split by idea, each module
  named for it (ledger/export_views.py).
- reads.py: the queries the area's pages show, within the user's grants. Functions of the
  user and of plain values (never of the request), returning rows, pages and dicts for the
  templates.
- forms.py: a Django form per page's filters and per action's input (common/forms.py). A
  filter's malformed value is ignored (a stale bookmark still shows the page); an action's
  bad value is Invalid with its field's message, answered as a service's refusal is (the
  page again with the message by the form, 422, or inside the htmx fragment).
- a module named for one more idea where an area has one: memories/page.py (the memory
  page, as every answer that shows it renders it), ledger/verification.py (the chain
  check), dashboard/charts.py (the charts' geometry, pure).

Templates: templates/console/<area>/<page>.html for a page, _<part>.html for a fragment or
a part included by full path ("console/ledger/_payload.html"); the shared ones (the error
page, pagers, the author badge, an action's notice) are in templates/console/common/.

The arrows point one way: urls -> views -> forms, reads -> common -> memory_core. A view
never imports another view. A page that shows what another area owns imports that area's
reads, forms or page module, never its views: the dashboard shows the ledger's last check
(ledger/verification.py), the scope page offers the finder's bulk actions
(finder/forms.py), the actor page names conflicts as the conflicts page does
(conflicts/forms.py), a conflict's decisions are the memory page's forms and re-render that
page (memories/forms.py, memories/page.py), the attribution export reads the attribution
page's lines (runs/reads.py). common/ imports no area.
"""
