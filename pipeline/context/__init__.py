"""CONTEXT.md (Tier 1): model, parse/render, translate, merge rules, changelog, bootstrap, migrate, prune, safe writes.

DESIGN.md "CONTEXT.md (Tier 1)".  Entry points: ``pipeline.context.api`` (plan_merge / apply_merge),
``pipeline.context.migrate`` and ``pipeline.context.prune``; the CLI lives in ``pipeline.commands.context``.
"""
