# Sourced by the other scripts: makes Z3 available and exports Z3_EXE.
# Uses $Z3_EXE if it is set and runs; otherwise installs the pinned z3-solver wheel from PyPI
# into .tools/z3-solver (once) and uses the z3 binary it contains.

z3_version=4.15.4.0
z3_dir="$root/.tools/z3-solver"

if [ -n "${Z3_EXE:-}" ] && "$Z3_EXE" --version >/dev/null 2>&1; then
  :
elif [ -x "$z3_dir/bin/z3" ]; then
  export Z3_EXE="$z3_dir/bin/z3"
else
  echo "germanium: installing Z3 $z3_version into .tools/z3-solver (pip, one time)..." >&2
  if command -v python3 >/dev/null 2>&1; then
    pip_cmd="python3 -m pip"
  elif command -v pip >/dev/null 2>&1; then
    pip_cmd="pip"
  else
    echo "germanium: error: Python 3 with pip is needed to install Z3; or set Z3_EXE" >&2
    exit 2
  fi
  PIP_ROOT_USER_ACTION=ignore $pip_cmd install --quiet --disable-pip-version-check --target "$z3_dir" "z3-solver==$z3_version" >&2 || {
    echo "germanium: error: installing Z3 failed; install it yourself and set Z3_EXE" >&2
    exit 2
  }
  export Z3_EXE="$z3_dir/bin/z3"
fi
