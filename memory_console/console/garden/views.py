"""The garden: what the gardening pass proposes, and people's decisions about it.

`/garden/` lists proposals (open by default) grouped by kind, for the scopes the user
reads; `/garden/<id>/` shows one. Approve, dismiss and bulk approve are POST-only actions
(methods.post_only) that call memory_core.garden.decisions, which runs the ordinary
services. Auditors see the same pages with no forms; a proposal outside the user's grants,
or with evidence outside them, is a 404.
"""

from django.contrib import messages
from django.shortcuts import redirect
from django.urls import reverse
from django.views.decorators.http import require_GET

from memory_console.console.common.access import console_view, proposal_for_reader
from memory_console.console.common.forms import page_number
from memory_console.console.common.methods import post_only
from memory_console.console.common.rendering import render_page
from memory_console.console.garden import reads
from memory_console.console.garden.forms import (
    ApproveForm,
    BackTo,
    BulkApproveForm,
    DismissForm,
    GardenFilter,
)
from memory_core.accounts.principals import Principal
from memory_core.garden import decisions
from memory_core.ledger import access_log
from memory_core.models import ProposalKind, ProposalState


def _detail_url(uid: str) -> str:
    return reverse("console:garden-proposal", args=[uid])


@console_view
@require_GET
def garden_list(request):
    user = request.user
    filters = GardenFilter(request.GET).values()
    state, kind = filters["state"], filters["kind"]
    page = page_number(request.GET.get("page")) if kind else 1
    deciding = reads.Deciding(user)
    groups, shown = reads.listing(user, state, kind, page, deciding)
    context = {
        "groups": groups,
        "state": state,
        "kind": kind,
        "states": ProposalState.choices,
        "kinds": ProposalKind.choices,
        "may_decide": deciding.administers_any and state == ProposalState.OPEN,
        "per_kind": reads.PER_KIND,
    }
    response = render_page(request, "console/garden/list.html", context)
    access_log.record(
        Principal.for_user(user),
        "garden.read",
        200,
        memory_ids=[uid for c in shown for uid in c.read_ids],
        count=len(shown),
    )
    return response


def _render_detail(request, uid, *, errors=None, posted=None, status=200):
    proposal = proposal_for_reader(request.user, uid)
    [card] = reads.cards(request.user, [proposal])
    context = {"card": card, "errors": errors or {}, "posted": posted or {}}
    response = render_page(request, "console/garden/detail.html", context, status=status)
    return response, card


@console_view
@require_GET
def garden_proposal(request, uid):
    response, card = _render_detail(request, uid)
    access_log.record(
        Principal.for_user(request.user),
        "garden.read",
        200,
        scope=card.proposal.scope.token,
        memory_ids=card.read_ids,
        count=1,
    )
    return response


def _invalid(request, error, uid):
    action = request.resolver_match.url_name.removeprefix("garden-")
    errors = {action: error.message}
    return _render_detail(request, uid, errors=errors, posted=request.POST, status=422)[0]


def _done(request, uid: str, message: str):
    messages.success(request, message)
    return redirect(BackTo(request.POST).target() or _detail_url(uid))


@post_only(lambda uid: _detail_url(uid))
@console_view(invalid=_invalid)
def garden_approve(request, uid):
    proposal = proposal_for_reader(request.user, uid, action="proposal.approve")
    form = ApproveForm(request.POST).cleaned()
    decided = decisions.approve(
        proposal,
        principal=Principal.for_user(request.user),
        retire_copies=form["retire_copies"],
        resolution=form["resolution"],
        text=form["text"],
        replace=form["replace"],
    )
    if decided.state == ProposalState.OBSOLETE:
        messages.warning(
            request, "Not approved: its evidence changed since the pass, so it is now obsolete."
        )
        return redirect(_detail_url(uid))
    made = ", ".join(m.uid for m in decided.created)
    note = f" Wrote {made}." if made else ""
    gone = f" Retired {len(decided.retired)} memor{'y' if len(decided.retired) == 1 else 'ies'}."
    return _done(request, uid, f"Approved {uid}.{note}{gone if decided.retired else ''}")


@post_only(lambda uid: _detail_url(uid))
@console_view(invalid=_invalid)
def garden_dismiss(request, uid):
    proposal = proposal_for_reader(request.user, uid, action="proposal.dismiss")
    reason = DismissForm(request.POST).cleaned()["reason"]
    decisions.dismiss(proposal, reason, principal=Principal.for_user(request.user))
    return _done(request, uid, f"Dismissed {uid}.")


@post_only("console:garden")
@console_view
def garden_bulk_approve(request):
    user = request.user
    bulk_id, outcomes = decisions.approve_many(
        BulkApproveForm(request.POST).cleaned()["ids"],
        principal=Principal.for_user(user),
        lookup=lambda uid: proposal_for_reader(user, uid, action="proposal.approve"),
    )
    done = sum(1 for o in outcomes if o.status == 200)
    messages.success(request, f"Approved {done} of {len(outcomes)} proposal(s) ({bulk_id}).")
    for outcome in outcomes:
        if outcome.status != 200:
            messages.error(request, f"{outcome.uid}: {outcome.message}")
    return redirect(reverse("console:garden"))
