"""Small helpers shared by the console tests."""

from memory_core.models import AccessLog


def refusals(action: str, outcome: int, principal: str):
    return AccessLog.objects.filter(
        channel="console", action=action, outcome=outcome, principal=principal
    )
