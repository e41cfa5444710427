"""The pipeline stages: extract, distil, weave, validate (DESIGN.md "Stages"). Each is a pure function."""
