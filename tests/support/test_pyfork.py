"""tests/support/pyfork.py's runs behave as the interpreter's own: argv, working directory, environment, stdin,
stdout and stderr apart, exit statuses (code, exception, signal), the script's folder on sys.path; a run dies with
its caller; without a server the client execs Python. A server importing nothing, under its own name.
Usage: test_pyfork.py   (exit status 0: passed)"""
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyfork  # noqa: E402

NAME = "ragmig-pyfork-selftest-%d" % os.getpid()


def client(tmp):
    """The client build/tests/python is, for NAME: tests/support/python.in filled in as CMake's configure_file does."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "python.in")) as f:
        text = f.read()
    for key, value in (("RAGMIG_PYTHON_PATH", sys.executable), ("RAGMIG_PYFORK_NAME", NAME),
                       ("PROJECT_SOURCE_DIR", os.path.dirname(os.path.dirname(here)))):
        text = text.replace("@%s@" % key, value)
    assert "@" not in text, text
    path = os.path.join(tmp, "python")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o755)
    return path


def run(python, args, **kwargs):
    return subprocess.run([python] + args, capture_output=True, text=True, **kwargs)


def check(python, tmp, served):
    """The cases whose outcome is the same with and without the server."""
    script = os.path.join(tmp, "lib", "main.py")
    os.makedirs(os.path.dirname(script), exist_ok=True)
    with open(os.path.join(tmp, "lib", "helper.py"), "w") as f:
        f.write("VALUE = 42\n")
    with open(script, "w") as f:
        f.write("import os, sys, helper\n"
                "print(sys.argv[1:], os.getcwd(), os.environ['PYFORK_TEST'], helper.VALUE, sys.stdin.read())\n"
                "print('to stderr', file=sys.stderr)\n"
                "if __name__ == '__main__': sys.exit(int(sys.argv[1]))\n")
    r = run(python, [script, "7", "x y"], cwd=tmp, input="from stdin", env=dict(os.environ, PYFORK_TEST="env"))
    assert r.returncode == 7, r
    assert r.stdout == "['7', 'x y'] %s env 42 from stdin\n" % os.path.realpath(tmp), r
    assert r.stderr == "to stderr\n", r
    r = run(python, ["-c", "import sys; print(sys.argv)", "a"])
    assert (r.returncode, r.stdout) == (0, "['-c', 'a']\n"), r
    r = run(python, ["-c", "raise ValueError('boom')"])
    assert r.returncode == 1 and r.stderr.rstrip().endswith("ValueError: boom"), r
    assert "pyfork" not in r.stderr and "runpy" not in r.stderr, r  # the run's own frames only
    r = run(python, ["-c", "import sys; sys.exit('a message')"])
    assert (r.returncode, r.stderr) == (1, "a message\n"), r
    r = run(python, ["-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"])
    assert r.returncode in (-signal.SIGKILL, 128 + signal.SIGKILL), r  # served: the exit status says so
    r = run(python, ["-c", "import os; print(os.getppid())"])
    ppid = int(r.stdout)
    assert (ppid != os.getpid()) == served, (ppid, served)  # the client's process is Python itself when not served
    r = run(python, ["-V"])  # not a form the server runs: the interpreter
    assert r.returncode == 0 and r.stdout.startswith("Python "), r


def run_pid(mark, wait_s=None):
    """The pid the run wrote to `mark`, once it has; None when it has not within wait_s seconds (None: no limit)."""
    deadline = None if wait_s is None else time.monotonic() + wait_s
    while not os.path.exists(mark) or not open(mark).read():
        if deadline is not None and time.monotonic() > deadline:
            return None
        time.sleep(0.02)
    return int(open(mark).read())


def assert_gone(pid, how):
    """The process `pid` ends within 30 s: well before its 60 s sleep, and not at the mercy of a loaded machine (the
    ASan suite beside a build once took over 5 s to schedule the handler that ends it)."""
    for _ in range(1500):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    raise AssertionError("the run %d outlived its caller (%s)" % (pid, how))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        python = client(tmp)
        check(python, tmp, served=False)
        pyfork.start(NAME, libraries=())
        try:
            check(python, tmp, served=True)
            # A run dies with its caller.
            mark = os.path.join(tmp, "pid")
            caller = subprocess.Popen([python, "-c", "import os, time; open(%r, 'w').write(str(os.getpid())); "
                                       "time.sleep(60)" % mark])
            pid = run_pid(mark)
            caller.kill()
            caller.wait()
            assert_gone(pid, "killed")
            # Also when the caller goes away before it hears that the run started (the server's "R" then finds
            # no one to read it): a client that sends its request and hangs up at once.
            os.remove(mark)
            code = ("import os, time; open(%r, 'w').write(str(os.getpid())); time.sleep(60)" % mark)
            with open(os.devnull, "rb") as null_in, open(os.devnull, "wb") as null_out:
                s = pyfork._connect(NAME)
                pyfork._send(s, {"argv": ["-c", code], "cwd": tmp, "env": dict(os.environ)},
                             fds=(null_in.fileno(), null_out.fileno(), null_out.fileno()))
                s.close()
            pid = run_pid(mark, wait_s=5)  # None: the server ended the run before it wrote its pid
            if pid is not None:
                assert_gone(pid, "hung up at once")
        finally:
            pyfork.stop(NAME)
        assert pyfork._connect(NAME) is None, "stopped, the server still answers"
        check(python, tmp, served=False)
    print("pyfork: all checks passed")


if __name__ == "__main__":
    main()
