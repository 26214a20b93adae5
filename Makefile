# The two set-up commands of the README: `make serve` (render and serve the bundled example) and `make test`.
SHELL := /bin/bash
VENV := .venv
MCO := $(VENV)/bin/mco
EXAMPLE := examples/cluster
STORE ?= /tmp/mco-example-store

.PHONY: deps test serve lint bench clean

deps:
	scripts/install-deps.sh

test: deps
	MCO_REQUIRE_TOOLS=1 $(VENV)/bin/python -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

lint: deps
	$(VENV)/bin/ruff check --no-cache ignition butane fleet renderer imagebuild server applier cli tests bench
	$(VENV)/bin/mypy ignition butane fleet renderer imagebuild server applier cli
	$(VENV)/bin/lint-imports

serve: deps
	$(MCO) serve $(EXAMPLE) --store $(STORE) --listen 127.0.0.1:22624

bench: deps
	$(VENV)/bin/python bench/run_all.py

clean:
	rm -rf $(VENV) .deps .pytest_cache
