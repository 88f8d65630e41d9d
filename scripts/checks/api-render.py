#!/usr/bin/env python3
"""A module's public API as text, from its symbol graphs (`swift symbolgraph-extract`): one line a declaration — its
path, what it declares as Swift spells it, and the platforms it is available on when it says — then one a
conformance or inheritance, sorted, so that two versions differ by exactly the lines of what changed.

Usage: api-render.py GRAPH_DIRECTORY MODULE   (reads MODULE.symbols.json and MODULE@*.symbols.json: its extensions
of other modules' types)."""
import glob
import json
import os
import sys


def availability(symbol):
    """`  [iOS 16.0+, macOS deprecated 13.0]`: what the symbol's `@available` attributes say, if anything."""
    parts = []
    for entry in symbol.get("availability", []):
        domain = entry.get("domain", "*")
        said = []
        for key in ("introduced", "deprecated", "obsoleted"):
            if key in entry:
                version = ".".join(str(entry[key].get(part, 0)) for part in ("major", "minor", "patch"))
                version = version[:-2] if version.endswith(".0") else version
                said.append(version + "+" if key == "introduced" else f"{key} {version}")
        if entry.get("isUnconditionallyDeprecated"):
            said.append("deprecated")
        if entry.get("isUnconditionallyUnavailable"):
            said.append("unavailable")
        if "renamed" in entry:
            said.append(f"renamed {entry['renamed']}")
        parts.append(f"{domain} {' '.join(said)}".strip())
    return f"  [{', '.join(sorted(parts))}]" if parts else ""


def declaration(symbol):
    """The declaration as Swift spells it, its whitespace made single spaces, with its generic constraints when it
    extends a type only under some (`where Element == …`)."""
    text = " ".join("".join(fragment["spelling"] for fragment in symbol.get("declarationFragments", [])).split())
    constraints = symbol.get("swiftExtension", {}).get("constraints", [])
    if constraints:
        joined = ", ".join(f"{c['lhs']} {':' if c['kind'] == 'conformance' else '=='} {c['rhs']}" for c in constraints)
        text += f"  (where {joined})"
    return text


def render(directory, module):
    lines = set()
    files = [os.path.join(directory, f"{module}.symbols.json")]
    files += sorted(glob.glob(os.path.join(directory, f"{module}@*.symbols.json")))
    for path in files:
        with open(path, encoding="utf-8") as handle:
            graph = json.load(handle)
        symbols = {symbol["identifier"]["precise"]: symbol for symbol in graph["symbols"]}
        for symbol in graph["symbols"]:
            lines.add(f"{'.'.join(symbol['pathComponents'])}  {declaration(symbol)}{availability(symbol)}")
        for relation in graph.get("relationships", []):
            if relation["kind"] not in ("conformsTo", "inheritsFrom") or relation["source"] not in symbols:
                continue
            target = symbols.get(relation["target"])
            name = ".".join(target["pathComponents"]) if target else relation.get("targetFallback", relation["target"])
            if name == "Swift.SendableMetatype":
                continue  # implied by Sendable, and named only by Swift 6.2's compiler: Xcode 16's apps see the same API
            word = "conforms to" if relation["kind"] == "conformsTo" else "inherits from"
            lines.add(f"{'.'.join(symbols[relation['source']]['pathComponents'])}  {word} {name}")
    return sorted(lines)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.stdout.write("".join(line + "\n" for line in render(sys.argv[1], sys.argv[2])))
