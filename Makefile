# The two set-up commands of the README:  `make demo`  and  `make test`.
# Each one builds everything it needs from scratch (virtual env, torch, the JS bundle), and only what is
# missing or out of date: the bundle is rebuilt only when js/ changed (hatch_build.py compares a hash).
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
TORCH ?= torch==2.13.0
STAMP := $(VENV)/.installed
PYTEST := $(BIN)/python -m pytest
# the suite runs on every core (pytest-xdist); the tests of a file stay on one worker, so its module-scoped captures
# and servers are made once (tests/conftest.py: groups, heaviest first). JOBS=1 for a serial run
JOBS ?= auto
XDIST := -n $(JOBS) --dist loadfile

.PHONY: demo test test-fast test-wheel test-torch dist bundle install clean bench lint format

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q "$(TORCH)"
	$(BIN)/pip install -q -e ".[test]"
	touch $(STAMP)

# builds inductor_lens/static/ from js/ (npm ci + npm run build) when it is missing or js/ changed
bundle:
	$(PY) hatch_build.py

install: $(STAMP) bundle

demo: install
	$(BIN)/inductor-lens demo -o lens-demo.html

# the whole suite but the wheel test (see test-wheel); --durations names the slowest tests
test: install
	$(PYTEST) -m "not wheel" $(XDIST) --durations=15 $(PYTEST_ARGS)

# the inner loop: no browser, no notebook kernel, no subprocess CLI runs, no packaging (about a minute)
test-fast: install
	$(PYTEST) -m "not browser and not kernel and not slow and not wheel" $(XDIST) $(PYTEST_ARGS)

# sdist -> wheel without node -> a fresh venv with only torch -> demo, a magic cell and the export
test-wheel: install
	INDUCTOR_LENS_TEST_TORCH="$(TORCH)" $(PYTEST) -m wheel $(PYTEST_ARGS)

# the capture and model layers on another torch, in its own venv: make test-torch TORCH=torch==2.15.0
test-torch:
	scripts/test_torch_versions.sh "$(TORCH)"

dist: install
	$(BIN)/python -m build --outdir dist .

# ruff (lint + format check) over the Python, biome (lint + format check) over the front end
js/node_modules/.bin/biome: js/package-lock.json
	cd js && npm ci --no-audit --no-fund

lint: install js/node_modules/.bin/biome
	$(BIN)/ruff check inductor_lens tests benchmarks scripts hatch_build.py
	$(BIN)/ruff format --check inductor_lens tests benchmarks scripts hatch_build.py
	cd js && npx biome check --error-on-warnings .

format: install js/node_modules/.bin/biome
	$(BIN)/ruff check --fix inductor_lens tests benchmarks scripts hatch_build.py
	$(BIN)/ruff format inductor_lens tests benchmarks scripts hatch_build.py
	cd js && npx biome check --write .

bench: install
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) js/node_modules inductor_lens/static build dist
