#!/usr/bin/python3
"""Every Catch2 test case the sources define runs as exactly one ctest entry.

catch_discover_tests makes one ctest entry per test case, passing the case's name to the binary
as a test spec. A name CMake splits (at ';') or Catch2 reads as more than a name (a '*'
wildcard, a leading '~' or '-', a '#' tag, a '\\' escape) gives entries that run nothing, or
other cases: Catch2 exits 0 either way. This test checks, on the configured build:
  - every name is one Catch2 takes literally;
  - each discovered binary's test cases and its ctest entries match one to one (the entry's spec,
    unescaped, equals the case's name);
  - the test cases the sources define (TEST_CASE in *.cc / *.cpp) equal those the binaries list,
    counting the sources this build compiles (a runtime-only or sanitizer build has fewer
    binaries; cuda_api_test needs a CUDA toolkit).
Usage: catch2_entries_test.py --build BUILD --source SOURCE
"""
import argparse
import collections
import json
import os
import re
import subprocess
import sys

# Test sources whose binary ctest runs whole (add_test, not discovered), where it is built.
WHOLE_BINARY_SOURCES = ["hal/cuda/cuda_api_test.cc"]
SPECIAL = re.compile(r'[;\\*"]|^[~#\-]|^\s|\s$')


def source_cases(root):
    """{relative source path: [test case names]}, from TEST_CASE's string literals."""
    found = {}
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(("build", ".")) and d != "fuzz"]
        for f in files:
            if not f.endswith((".cc", ".cpp")):
                continue
            path = os.path.join(folder, f)
            text = open(path, encoding="utf-8", errors="replace").read()
            names = []
            for m in re.finditer(r'\bTEST_CASE\s*\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', text):
                names.append("".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1))))
            if names:
                found[os.path.relpath(path, root)] = names
    return found


def compiled_sources(build, root):
    """The sources the build compiles, relative to `root` (None without a Ninja build)."""
    if not os.path.exists(os.path.join(build, "build.ninja")):
        return None
    r = subprocess.run(["ninja", "-C", build, "-t", "compdb"], capture_output=True, text=True, check=True)
    return {os.path.relpath(os.path.join(e["directory"], e["file"]), root) for e in json.loads(r.stdout)}


def unescape(spec):
    return spec.replace("\\,", ",").replace("\\[", "[").replace("\\]", "]")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--build", required=True)
    p.add_argument("--source", required=True)
    args = p.parse_args()
    problems = []
    defined = source_cases(args.source)
    for path, names in sorted(defined.items()):
        for name in names:
            if SPECIAL.search(name):
                problems.append(f"{path}: test case name {name!r} has a character Catch2 or CMake reads specially")

    r = subprocess.run(["ctest", "--test-dir", args.build, "--show-only=json-v1"], capture_output=True, text=True,
                       check=True)
    entries = collections.defaultdict(list)  # binary -> [spec]
    for test in json.loads(r.stdout)["tests"]:
        command = test.get("command") or []
        if len(command) >= 4 and command[2:4] == ["-w", "NoTests"]:
            entries[command[0]].append(unescape(command[1]))
    listed_total = 0
    for binary, specs in sorted(entries.items()):
        r = subprocess.run([binary, "--list-test-names-only"], capture_output=True, text=True)
        names = [line for line in r.stdout.splitlines() if line.strip()]
        listed_total += len(names)
        rel = os.path.relpath(binary, args.build)
        for name, count in collections.Counter(specs).items():
            if count > 1:
                problems.append(f"{rel}: {count} ctest entries for {name!r}")
        for name in sorted(set(names) - set(specs)):
            problems.append(f"{rel}: test case {name!r} has no ctest entry")
        for spec in sorted(set(specs) - set(names)):
            problems.append(f"{rel}: ctest entry {spec!r} matches no test case")
        print(f"{rel}: {len(names)} test cases, {len(specs)} ctest entries")

    defined_total = sum(len(v) for v in defined.values())
    compiled = compiled_sources(args.build, args.source)
    left_out = 0
    if compiled is None:
        print("no compile database (not a Ninja build): the sources' count is not compared")
    else:
        for path, names in sorted(defined.items()):
            if path not in compiled:
                left_out += len(names)
                print(f"{path}: not compiled in this build ({len(names)} test cases)")
            elif path in WHOLE_BINARY_SOURCES:
                listed_total += len(names)  # ctest runs its binary whole
        if defined_total - left_out != listed_total:
            problems.append(f"the sources this build compiles define {defined_total - left_out} test cases, "
                            f"the binaries hold {listed_total}")
    for problem in problems:
        print("FAIL " + problem)
    print(f"catch2 entries: the sources define {defined_total} test cases ({left_out} in sources this build "
          f"does not compile); the binaries hold {listed_total}, run by {sum(len(s) for s in entries.values())} ctest entries "
          f"of {len(entries)} discovered binaries (and whole binaries); {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
