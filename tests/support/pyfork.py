"""A fork server for the tests' Python: the parity tests run ~40 short Python scripts, and each run spent most of its
time, ~10 s, importing torch, transformers, sentence-transformers and peft. The server imports them once; each run forks
from it with the caller's argv, working directory, environment and stdin/stdout/stderr (passed over a Unix socket),
so to its caller a run is a Python process like any other: same output, same exit status.

  pyfork.py start NAME    stops a server named NAME, starts a new one in the background, returns once it serves
                          (exit status 0 even where it cannot start: the runs then start Python themselves)
  pyfork.py stop NAME     stops it (the server also stops itself after IDLE_S without a run)

The client is build/tests/python (tests/CMakeLists.txt): tests run it as they would run Python, with `-c CODE` or
`SCRIPT` and arguments; any other form of command line, or no server, execs the real interpreter. NAME is an
abstract Unix socket (Linux; no file to clean up), served only to the server's own user. A run's process is a
grandchild of the server: its parent reports its exit status (128 + signal when killed) and kills it when the
caller goes away."""
import json
import os
import select
import signal
import socket
import struct
import sys
import time
import traceback

IDLE_S = 1800
_HEADER = struct.Struct("!Q")  # the request's length; the request is JSON: {"argv", "cwd", "env"} or {"stop"}
_LIBRARIES = ("torch", "numpy", "safetensors.torch", "transformers", "tokenizers", "sentence_transformers", "peft")


def _connect(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect("\0" + name)
        return s
    except OSError:
        s.close()
        return None


def _send(s, request, fds=()):
    data = json.dumps(request).encode()
    socket.send_fds(s, [_HEADER.pack(len(data))], list(fds))
    s.sendall(data)


def _recv_exactly(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


# --- client ---------------------------------------------------------------------------------------------------

def run_client(name, python, args):
    """Runs `python args` in the server named `name`, else execs it; exits with the run's exit status."""
    served = bool(args) and ((args[0] == "-c" and len(args) > 1) or not args[0].startswith("-"))
    s = _connect(name) if served else None
    try:
        if s is not None:
            _send(s, {"argv": args, "cwd": os.getcwd(), "env": dict(os.environ)}, fds=(0, 1, 2))
            started = s.recv(1) == b"R"
    except OSError:
        started = False
    if s is None or not started:  # no server, or it went away before it started the run: nothing ran
        os.execv(python, [python] + args)
    try:
        status = int(_recv_exactly(s, 4).decode())
    except (EOFError, ValueError, OSError):
        sys.stderr.write("pyfork: the server's run of %s ended without an exit status\n" % args[:1])
        status = 1
    sys.exit(status)


# --- server ---------------------------------------------------------------------------------------------------

def _execute(argv, cwd, env):
    """In the run's process: runs `python argv` as the interpreter would; never returns."""
    import runpy

    os.chdir(cwd)
    os.environ.clear()
    os.environ.update(env)
    status = 0
    try:
        if argv[0] == "-c":
            sys.argv = ["-c"] + argv[2:]
            sys.path[0] = ""
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__", "__builtins__": __builtins__})
        else:
            sys.argv = list(argv)
            sys.path[0] = os.path.dirname(os.path.abspath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
    except SystemExit as e:
        if e.code is None:
            status = 0
        elif isinstance(e.code, int):
            status = e.code & 0xFF
        else:
            sys.stderr.write("%s\n" % e.code)
            status = 1
    except BaseException as e:
        tb = e.__traceback__  # from the run's own code on, as the interpreter prints it
        while tb is not None and tb.tb_frame.f_code.co_filename in (__file__, "<frozen runpy>"):
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(status)


def _end_with_caller(pid):
    """In the handler, once its caller is gone: ends the run `pid`, then the handler itself."""
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    os._exit(0)


def _handle(conn):
    """In a child of the server, for one connection: the request, the run, its exit status."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        header, fds, _, _ = socket.recv_fds(conn, _HEADER.size, 3)
        request = json.loads(_recv_exactly(conn, _HEADER.unpack(header)[0]))
    except Exception:
        os._exit(1)
    if request.get("stop"):
        os.kill(os.getppid(), signal.SIGTERM)
        os._exit(0)
    pid = os.fork()
    if pid == 0:
        conn.close()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        _execute(request["argv"], request["cwd"], request["env"])
    for fd in fds:
        os.close(fd)
    try:
        conn.sendall(b"R")
    except OSError:  # the caller went away before it heard that its run started (it may have seen the run's output)
        _end_with_caller(pid)
    pidfd = os.pidfd_open(pid)
    while True:
        ready, _, _ = select.select([conn, pidfd], [], [])
        if pidfd in ready:
            _, wait_status = os.waitpid(pid, 0)
            code = os.waitstatus_to_exitcode(wait_status)
            conn.sendall(b"%4d" % (code if code >= 0 else 128 - code))
            os._exit(0)
        try:
            gone = not conn.recv(1)
        except OSError:  # reset: the caller hung up with our "R" unread (Linux resets a Unix socket closed so)
            gone = True
        if gone:  # the caller went away: so does its run
            _end_with_caller(pid)


def serve(name, ready_fd, libraries=_LIBRARIES):
    """Serves runs until stopped or idle for IDLE_S; writes to ready_fd once it accepts connections (they wait
    while it imports the libraries)."""
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind("\0" + name)
    listener.listen(64)
    os.write(ready_fd, b"1")
    os.close(ready_fd)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # read as they are imported; the tests run offline too
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    for library in libraries:  # what the Python lacks, a run imports (or fails to) itself
        try:
            __import__(library)
        except Exception:
            pass
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the runs' parents are reaped by the kernel
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    while True:
        ready, _, _ = select.select([listener], [], [], IDLE_S)
        if not ready:
            return
        conn, _ = listener.accept()
        _, uid, _ = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED,
                                                       struct.calcsize("3i")))
        if uid == os.getuid() and os.fork() == 0:
            listener.close()
            try:
                _handle(conn)
            finally:  # _handle ends its process itself; an exception must not go on serving in this copy
                os._exit(1)
        conn.close()


def stop(name):
    s = _connect(name)
    if s is None:
        return
    _send(s, {"stop": True})
    s.recv(1)  # EOF once the server's child handled it
    for _ in range(100):  # the server exits on SIGTERM at once; its name is free when it has
        probe = _connect(name)
        if probe is None:
            return
        probe.close()
        time.sleep(0.05)


def start(name, libraries=_LIBRARIES):
    stop(name)
    ready_r, ready_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # detached: ctest waits for a test's grandchildren only while they hold its output
        os.close(ready_r)
        os.setsid()
        if os.fork() != 0:
            os._exit(0)
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        try:
            serve(name, ready_w, libraries)
        finally:
            os._exit(0)
    os.close(ready_w)
    os.waitpid(pid, 0)
    if os.read(ready_r, 1) == b"1":
        print("pyfork: %s serves (importing %s)" % (name, ", ".join(libraries)))
    else:
        print("pyfork: %s did not start; the tests' runs start Python themselves" % name)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("start", "stop"):
        sys.exit(__doc__)
    (start if sys.argv[1] == "start" else stop)(sys.argv[2])
