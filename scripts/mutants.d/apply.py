"""Replaces exactly one occurrence of a check in a source file; fails when it is absent or ambiguous."""
import sys

path, original, replacement = sys.argv[1:4]
text = open(path, encoding="utf-8").read()
if text.count(original) != 1:
    sys.exit(f"{path}: expected exactly one occurrence, found {text.count(original)}")
open(path, "w", encoding="utf-8").write(text.replace(original, replacement))
