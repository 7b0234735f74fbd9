"""What several console areas share; nothing here imports an area.

access.py (access-scoped lookups, and console_view: login, parameters checked, refusals as
pages), actions.py (the one shape of an htmx action's answer), forms.py (the base forms and
fields every area's forms are made of), parameters.py (what no parameter may be, checked
before any view), cursors.py (keyset pages over the append-only tables), links.py
(addresses of things named by hosts), methods.py (an action's address answering a GET),
rendering.py (one view, a page or its fragment), tree.py (the scope tree's order, pure).
"""
