# duck-tape pipeline — every target creates .venv from nothing when it is missing.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
RUN_TRANSCRIPT ?= fixtures/claude-code/checkout-rate-limit.jsonl
RUN_DIR ?= .duck-tape-demo

.PHONY: run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]' --config-settings editable_mode=compat
	$(BIN)/python -m compileall -q pipeline evals  # hooks start faster with bytecode, even where Python may not write it
	$(BIN)/python -m pipeline.recache >/dev/null  # and with their regular expressions compiled (pipeline/recache.py)
	touch $(STAMP)

## make run: recover a state file from the bundled Claude Code transcript and print it
run: $(STAMP)
	rm -rf $(RUN_DIR)
	$(BIN)/duck-tape recover $(RUN_TRANSCRIPT) --dir $(RUN_DIR) --yes --mask

## make test: the whole test suite
test: $(STAMP)
	$(BIN)/python -m pytest -q

## make bench: speed and memory figures on generated inputs (issue 14 sizes 5 MB to 1 GB: ~30 min today)
## BENCH_SIZES=5,60 make bench: the quick run (sizes in MB); BENCH_TIMEOUT=N: seconds per run before it is killed
bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) $(RUN_DIR) .pytest_cache
