"""What the end-to-end scripts share: named checks that print ok/FAIL and collect failures,
and the figures hexir-run prints."""
import re
import subprocess

FAILURES = []


def check(what, ok, detail=""):
    """Prints `what` as ok or FAIL (with `detail`, indented, on failure) and records a failure."""
    print(f"{'ok  ' if ok else 'FAIL'} {what}")
    if not ok:
        FAILURES.append(what)
        if detail:
            print("     " + detail.strip().replace("\n", "\n     "))
    return ok


def summary():
    """Prints the count of failures; the exit status for main()."""
    print(f"{len(FAILURES)} failures" if FAILURES else "all passed")
    return 1 if FAILURES else 0


def constant_bytes(run_tool, path, function):
    """The constants one function of an executable makes resident (hexir-run --benchmark 1), or None."""
    out = subprocess.run([run_tool, path, "--function", function, "--benchmark", "1"], capture_output=True,
                         text=True).stdout
    m = re.search(r"constants: (\d+) bytes", out)
    return int(m.group(1)) if m else None
