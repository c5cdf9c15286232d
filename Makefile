# Two commands do all set-up on a fresh machine: `make demo` and `make test`.
# The interpreter the venv is made from (`make PYTHON=...` to choose): the distribution's
# CPython (/usr/bin/python3) when it is 3.11 or newer and makes venvs -- built with
# profile-guided and link-time optimisation, it runs revasm's Python 1.1-1.3x faster than
# a version manager's default build (docs/decisions.md, "The venv's interpreter") --
# else the python3 on PATH.
PYTHON ?= $(or $(shell for p in /usr/bin/python3 python3; do "$$p" -c 'import sys, venv, \
	ensurepip; sys.exit(sys.version_info < (3, 11))' 2>/dev/null && { echo "$$p"; break; }; \
	done),python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-long lint typecheck install clean docs conformance formal

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test,plots]'
	@# bytecode for the sources, as a non-editable install writes it: a shell that sets
	@# PYTHONDONTWRITEBYTECODE otherwise compiles them again at every command's start
	$(BIN)/python -m compileall -q src
	@# the compiler's compiled loops for long programs, into numba's cache (~3 s, once)
	$(BIN)/python -c 'from revasm.compiler.backend.pair_scans import warm; warm()'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)
	$(BIN)/python examples/demo.py
	@echo
	@echo "revasm is installed in $(VENV): run 'source $(VENV)/bin/activate' in each new shell"
	@echo "for the README's commands (or type $(BIN)/revasm instead of revasm)."

# ruff and mypy run first; either failing fails `make test`.  The suite runs in one
# worker process per core (at most 4), each test file whole in one worker, the longest files
# first (tests/conftest.py, docs/decisions.md).
test: lint typecheck
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadfile --no-loadscope-reorder \
		--durations=25 -m "not long"

# The campaigns make test samples (tests marked `long`: the full counts of the sampled
# tests, tests/support/sampling.py; e.g. the interpreter kernel on 134 random programs in three
# modes), on their own: tens of minutes.
test-long: $(STAMP)
	$(BIN)/python -m pytest -q -n auto --maxprocesses 4 --dist loadfile --no-loadscope-reorder \
		--durations=25 -m long

# The PAL conformance suite with every program on every engine (make test leaves the
# compiled engine out of the longest ones: its kernel build takes minutes for them).
conformance: $(STAMP)
	REVASM_CONFORMANCE_ALL=1 $(BIN)/python -m pytest -q tests/sim/test_pal_conformance.py

# Every formal proof of the RTL (docs/rtl.md "Formal proofs"), one at a time under nice, each
# stopped after FORMAL_TIMEOUT seconds (reported as a time-out, never as proven); the results
# go to docs/formal_results.json and the table in docs/rtl.md is regenerated from them.
# Hours, not minutes: make test proves a bounded sample.
FORMAL_TIMEOUT ?= 900
formal: $(STAMP)
	-nice -n 10 $(BIN)/revasm rtl formal --jobs 1 --timeout $(FORMAL_TIMEOUT) \
		--record docs/formal_results.json
	$(BIN)/python -m revasm.rtl.verification.proof_registry docs/rtl.md

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

docs: $(STAMP)
	$(BIN)/python -m revasm.isa.docs > docs/isa.md

clean:
	rm -rf $(VENV) build *.egg-info "$${XDG_CACHE_HOME:-$$HOME/.cache}/revasm/test-kernels"
