#!/bin/sh
# The drop7 Python package's tests (issue 37): build the package into a virtual environment
# under target/ and run its pytest suite. Part of the test command (README, .ci/run).
#
#   sh scripts/test-python.sh            # needs python3 (>= 3.9) with venv, and PyPI or a cache
#
# The environment is kept between runs (target/python-venv); the package is rebuilt with the
# `ci` cargo profile (the test profile, so the workspace's compiled crates are reused).
set -eu
cd "$(dirname "$0")/.."
venv=target/python-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --disable-pip-version-check "maturin>=1.5,<2" "numpy>=1.22" "gymnasium>=0.29" "pytest>=7"
VIRTUAL_ENV=$PWD/$venv PATH=$PWD/$venv/bin:$PATH \
  "$venv/bin/maturin" develop -q --profile ci -m crates/drop7-py/Cargo.toml
"$venv/bin/python" -m pytest -q crates/drop7-py/tests
