# The two set-up commands of the README:  `make demo`  and  `make test`.
# Each one builds everything it needs from scratch (virtual env, torch, the JS bundle).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH ?= torch==2.13.0
STAMP := $(VENV)/.installed

.PHONY: demo test bundle install clean bench

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "$(TORCH)"
	$(BIN)/pip install -q -e ".[test]"
	touch $(STAMP)

js/node_modules/.package-lock.json: js/package.json js/package-lock.json
	cd js && npm ci --no-audit --no-fund

bundle: js/node_modules/.package-lock.json
	cd js && npm run build

install: $(STAMP) bundle

demo: install
	$(BIN)/inductor-lens demo -o lens-demo.html

test: install
	$(BIN)/python -m pytest $(PYTEST_ARGS)

bench: install
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) js/node_modules inductor_lens/static
