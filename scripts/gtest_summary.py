#!/usr/bin/env python3
"""Adds up the GoogleTest results in a meson test log and prints one line:
'tests: N passed, N failed, N skipped'. Exits 1 when nothing ran or
something failed."""
import re
import sys

text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
passed = sum(int(n) for n in re.findall(r"^\[  PASSED  \] (\d+) tests?\.", text, re.M))
skipped = sum(int(n) for n in re.findall(r"^\[  SKIPPED \] (\d+) tests?, listed below", text, re.M))
failed = sum(int(n) for n in re.findall(r"^ ?(\d+) FAILED TESTS?", text, re.M))
# A test binary that crashed or timed out prints no GoogleTest summary.
crashed = sum(1 for r in re.findall(r"^result:\s*(.*?)\s*$", text, re.M) if r != "exit status 0")
print(f"tests: {passed} passed, {failed + crashed} failed, {skipped} skipped")
sys.exit(1 if failed or crashed or passed == 0 else 0)
