# `make run` starts the whole system; `make test` runs every test tier. Both set up .venv first.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test lint proto system-deps clean

run: $(STAMP)
	$(BIN)/esteira dev

test: $(STAMP) system-deps
	$(BIN)/pytest $(PYTEST_ARGS)

lint: $(STAMP)
	$(BIN)/ruff check .

proto: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" bash scripts/gen_proto.sh

system-deps:
	bash scripts/install-system-deps.sh

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Python >= 3.11 is required (found $$($(PYTHON) --version))"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
	touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
