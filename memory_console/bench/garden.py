"""`garden` in the bench: one gardening pass (memory_core/garden/) over the bench
organisation, timed end to end (detection, reconciling with stored proposals, health).

A reused bench database keeps the proposals of earlier runs, so a second run measures the
idempotent pass (the same evidence kept, nothing written twice), which is the steady state
of a nightly pass.
"""

from memory_core.garden import passes


def timing() -> dict:
    report = passes.run_pass()
    return {
        "seconds": round(report.seconds, 2),
        "memories": report.memories,
        "proposals": report.open_proposals,
    }


def line(figure: dict) -> str:
    return (
        f"garden: one pass over {figure['memories']} live memories in "
        f"{figure['seconds']:.1f} s ({figure['proposals']} open proposals)"
    )
