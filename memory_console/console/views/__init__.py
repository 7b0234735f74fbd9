"""Console views, a module per idea: scopes (tree, one scope, publish), memories (the page),
memory_actions (correct, republish, pin, invalidate, forget)."""
