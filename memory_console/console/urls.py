"""The console's addresses (CONSOLE.md, "Addresses"): scripts, bookmarks and the audit
trail's links depend on these staying put. Included at "" by memory_console/urls.py."""

from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.generic import RedirectView

from memory_console.console.views import memories, memory_actions, scopes

app_name = "console"

urlpatterns = [
    path(
        "login/",
        auth_views.LoginView.as_view(redirect_authenticated_user=True),
        name="login",
    ),
    path("logout/", auth_views.LogoutView.as_view(next_page="/login/"), name="logout"),
    # Until the dashboard exists, "/" (where login lands) opens the scope tree.
    path("", RedirectView.as_view(pattern_name="console:scopes"), name="home"),
    path("scopes/", scopes.scope_list, name="scopes"),
    path("scopes/<str:token>/", scopes.scope_detail, name="scope"),
    path("scopes/<str:token>/publish/", scopes.scope_publish, name="scope-publish"),
    path("memories/<str:uid>/", memories.memory_detail, name="memory"),
    path("memories/<str:uid>/correct/", memory_actions.correct, name="memory-correct"),
    path("memories/<str:uid>/republish/", memory_actions.republish, name="memory-republish"),
    path("memories/<str:uid>/pin/", memory_actions.pin, name="memory-pin"),
    path("memories/<str:uid>/unpin/", memory_actions.unpin, name="memory-unpin"),
    path("memories/<str:uid>/invalidate/", memory_actions.invalidate, name="memory-invalidate"),
    path("memories/<str:uid>/forget/", memory_actions.forget, name="memory-forget"),
]
