#!/usr/bin/env bash
# The Python Array API standard's conformance suite (data-apis/array-api-tests), run against
# ndengine.array_api, ndengine's main namespace and, in the same run as the baseline, against
# NumPy's own main namespace,
# with --max-examples=10. Prints passed / failed / skipped (and the known failures, xfailed,
# listed with their reasons in bench/array_api_xfails.txt) for each.
#
#   bench/array_api_conformance.sh [SUITE_DIR] [extra pytest arguments, e.g. -k test_sort]
#
# SUITE_DIR: the suite's checkout (its array_api_tests/ folder and conftest.py); default
# $ARRAY_API_TESTS_DIR, else ../shared/array-api-tests beside this repository. Needs the
# [array-api] extra (pip install -e ".[array-api]": ndindex, pytest-json-report, pytest,
# hypothesis). The suite's folder is only read: pytest runs in a temporary folder, which also
# holds Hypothesis' example database and the full logs (kept; their path is printed).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
suite="${ARRAY_API_TESTS_DIR:-$repo/../shared/array-api-tests}"
if [[ $# -gt 0 && -d "$1" ]]; then
    suite="$1"
    shift
fi
if [[ ! -d "$suite/array_api_tests" ]]; then
    echo "array-api-tests not found at $suite: pass its folder as the first argument or set" \
         "ARRAY_API_TESTS_DIR" >&2
    exit 2
fi
suite="$(cd "$suite" && pwd)"
xfails="$repo/bench/array_api_xfails.txt"
work="$(mktemp -d "${TMPDIR:-/tmp}/array_api_conformance.XXXXXX")"
export HYPOTHESIS_STORAGE_DIRECTORY="$work/hypothesis"
export PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}"

run_suite() {  # run_suite MODULE LOG [pytest arguments...]
    local module="$1" log="$2"
    shift 2
    local started=$SECONDS
    (cd "$work" && ARRAY_API_TESTS_MODULE="$module" python -m pytest -q -rfX -p no:cacheprovider \
        -c "$suite/pytest.ini" --rootdir "$suite" --max-examples=10 "$@" \
        "$suite/array_api_tests" >"$log" 2>&1) || true
    local summary
    summary="$(grep -E '^=* ?[0-9]+ (passed|failed|skipped|error)' "$log" | tail -1 | tr -d "=" || true)"
    if [[ -z "$summary" ]]; then
        echo "$module: no pytest summary; the log ends:" >&2
        tail -5 "$log" >&2
    fi
    local -A counts=()
    for key in passed failed skipped xfailed xpassed error errors; do
        counts[$key]="$(grep -oE "[0-9]+ $key\b" <<<"$summary" | grep -oE '^[0-9]+' || echo 0)"
    done
    printf '%-20s passed %5d  failed %5d  skipped %5d  xfailed (known) %4d  xpassed %3d  errors %d  (%ds)\n' \
        "$module" "${counts[passed]}" "${counts[failed]}" "${counts[skipped]}" \
        "${counts[xfailed]}" "${counts[xpassed]}" "$((counts[error] + counts[errors]))" \
        "$((SECONDS - started))"
}

echo "suite: $suite ($(python -c 'import numpy; print("NumPy", numpy.__version__)'))"
run_suite ndengine.array_api "$work/ndengine.log" --xfails-file "$xfails" "$@"
# the main namespace, as NumPy's own is measured below (no known failures listed for either)
run_suite ndengine "$work/ndengine-main.log" "$@"
run_suite numpy "$work/numpy.log" "$@"
echo "logs: $work/ndengine.log, $work/ndengine-main.log, $work/numpy.log (failures and" \
     "xpasses listed at their ends)"
