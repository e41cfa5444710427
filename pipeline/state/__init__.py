"""Agent State file (Tier 2): model, render/parse, the .duck-tape store and marker (DESIGN.md "Agent State file")."""
