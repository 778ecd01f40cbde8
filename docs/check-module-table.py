#!/usr/bin/env python3
"""architecture.md's module tables against Package.swift: every target in one row, each row's "depends on" cell
the target's dependencies exactly. make check runs it; anything it prints fails.

usage: check-module-table.py PACKAGE_JSON ARCHITECTURE_MD
  PACKAGE_JSON: `swift package dump-package`'s output
"""
import json
import re
import sys

HEADERS = ("| module | kind | depends on |", "| test target | what it checks | depends on |")


def package_targets(dump):
    targets = {}
    for target in dump["targets"]:
        names = set()
        for dependency in target.get("dependencies", []):
            for value in dependency.values():
                names.add(value[0])
        targets[target["name"]] = names
    return targets


def table_rows(text):
    """Each row of the module tables as (line number, names, dependencies)."""
    rows, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip() in HEADERS:
            inside = True
            continue
        if not inside:
            continue
        if not line.startswith("|"):
            inside = False
            continue
        cells = line.strip().strip("|").split("|")
        if set(cells[0].strip()) <= set("- "):
            continue
        if len(cells) != 3:
            rows.append((number, [], None))
            continue
        names = re.findall(r"`([^`]+)`", cells[0])
        rows.append((number, names, set(re.findall(r"`([^`]+)`", cells[2]))))
    return rows


def problems(targets, text):
    found, seen = [], {}
    for number, names, dependencies in table_rows(text):
        if not names or dependencies is None:
            found.append(f"line {number}: not a row of three cells naming targets")
            continue
        for name in names:
            if name in seen:
                found.append(f"line {number}: {name} is in line {seen[name]} too")
            seen[name] = number
            if name not in targets:
                found.append(f"line {number}: {name} is not a target in Package.swift")
            elif dependencies != targets[name]:
                wrong = [f"misses {', '.join(sorted(targets[name] - dependencies))}"] if targets[name] - dependencies else []
                if dependencies - targets[name]:
                    wrong.append(f"names {', '.join(sorted(dependencies - targets[name]))}, which it does not depend on")
                found.append(f"line {number}: {name}'s row {' and '.join(wrong)}")
    for name in sorted(set(targets) - set(seen)):
        found.append(f"{name} is in Package.swift but in no row of the module tables")
    return found


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as dump, open(sys.argv[2]) as doc:
        found = problems(package_targets(json.load(dump)), doc.read())
    for problem in found:
        print(f"{sys.argv[2]}: {problem}")
    sys.exit(1 if found else 0)


if __name__ == "__main__":
    main()
