# `make run` starts the whole system; `make test` runs every test tier. Both set up .venv first.
VENV ?= .venv
PYTHON ?= python3
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: run test lint lock proto system-deps clean

# The one command that writes the lock files (runtime; dev; runtime + `embedded` for the systemd
# host); tests/deploy/test_lock.py checks their headers.
UV_COMPILE := $(BIN)/uv pip compile pyproject.toml --universal --python-version 3.11 \
	--generate-hashes

run: $(STAMP)
	$(BIN)/esteira dev

test: $(STAMP) system-deps
	$(BIN)/pytest $(PYTEST_ARGS)

# Ruff, then mypy on the whole tree (strict on shared/ and workflows/; see pyproject.toml).
lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

proto: $(STAMP)
	PATH="$(abspath $(BIN)):$$PATH" bash scripts/gen_proto.sh

# Re-resolve after editing pyproject.toml; the current pins are kept where they still fit.
# `make lock UV_ARGS=--upgrade` moves everything to the newest versions.
lock: $(STAMP)
	$(UV_COMPILE) $(UV_ARGS) -o requirements.lock
	$(UV_COMPILE) $(UV_ARGS) --extra dev -c requirements.lock -o requirements-dev.lock
	$(UV_COMPILE) $(UV_ARGS) --extra embedded -c requirements.lock -o requirements-embedded.lock

system-deps:
	bash scripts/install-system-deps.sh

# Installs the pinned, hashed dependencies, then the project itself without resolving again.
$(STAMP): pyproject.toml requirements-dev.lock
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "Python >= 3.11 is required (found $$($(PYTHON) --version))"; exit 1; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -r requirements-dev.lock
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $(STAMP)

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
