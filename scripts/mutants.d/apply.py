"""Replaces exactly one occurrence of a check in a source file; fails when it is absent or ambiguous.

`original` is matched as written when it occurs once; otherwise ignoring whitespace (the formatter may wrap a check
over several lines): found in the file with every space and line break taken out of both, and the source from its
first to its last character is replaced.
With --dry-run, only says whether the mutant applies.
"""
import sys

args = [arg for arg in sys.argv[1:] if arg != "--dry-run"]
path, original, replacement = args[:3]
text = open(path, encoding="utf-8").read()
if text.count(original) == 1:
    if "--dry-run" not in sys.argv:
        open(path, "w", encoding="utf-8").write(text.replace(original, replacement))
    sys.exit(0)
# Every non-whitespace character of the file and where it is.
positions = [index for index, character in enumerate(text) if not character.isspace()]
squeezed = "".join(text[index] for index in positions)
needle = "".join(character for character in original if not character.isspace())
count = squeezed.count(needle) if needle else 0
if count != 1:
    sys.exit(f"{path}: expected exactly one occurrence, found {count}")
start = squeezed.index(needle)
first, last = positions[start], positions[start + len(needle) - 1]
if "--dry-run" not in sys.argv:
    open(path, "w", encoding="utf-8").write(text[:first] + replacement.strip() + text[last + 1:])
