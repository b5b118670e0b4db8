# The resident Python interpreter of MCP Sandbox. The engine starts it once
# per sandbox (see sandbox/runner/doc.go for the protocol) and sends it code
# to run; variables persist between runs, like a notebook's.
#
# It uses only the standard library and runs on Python 3.6 and later. The
# bootstrap (interp.go) executes this text with NONCE set in its globals.
import ast
import builtins
import importlib
import io
import json
import linecache
import os
import select
import site
import sys
import threading
from time import perf_counter, sleep  # bound here: code the runner runs may replace them
import traceback
import types
import warnings

VERSION = "1"
NONCE_B = NONCE.encode("ascii")  # noqa: F821 (set by the bootstrap)
RUNNER_FILE = "<mcp-sandbox-runner>"
CO_COROUTINE = 0x0080
MAX_RESULT = 1 << 16  # runner.MaxResult: the done frame stays within runner.MaxPayload
MAX_FIGURES = 64  # per run; the engine returns at most 16 and says so
REAL_EXIT = os._exit


class Channel:
    """Frames to and from the engine, on file descriptors of their own."""

    def __init__(self, rfd, wfd):
        self.r = io.open(rfd, "rb", buffering=1 << 16)
        self.wfd = wfd
        self.lock = threading.Lock()

    def send(self, kind, payload=b""):
        data = ("%s %s %d\n" % (NONCE, kind, len(payload))).encode("ascii") + payload  # noqa: F821
        view = memoryview(data)
        with self.lock:
            while view:
                n = os.write(self.wfd, view)
                view = view[n:]

    def send_json(self, kind, obj):
        self.send(kind, json.dumps(obj).encode("utf-8"))

    def recv(self):
        line = self.r.readline(128)
        if not line:
            return None, None
        parts = line.split()
        if len(parts) != 3 or parts[0] != NONCE_B:
            raise ValueError("bad frame header %r" % line[:40])
        n = int(parts[2])
        payload = self.r.read(n)
        if len(payload) != n:
            return None, None
        return parts[1].decode("ascii"), payload


class Relay:
    """Makes fd a pipe and relays what is written to it as frames of kind.

    Its thread and sync() read the pipe only while they hold the lock, and
    send what they read before they let it go: once sync() has read the
    pipe empty, all output written before it is sent, ahead of the run's
    "done" frame (without a thread's wake-up per run, as a marker the
    thread had to pass cost: 0.15 ms of a print(1)).
    """

    def __init__(self, chan, kind, fd):
        self.chan, self.kind = chan, kind
        r, w = os.pipe()
        os.dup2(w, fd)
        os.close(w)
        os.set_blocking(r, False)
        self.r = r
        self.lock = threading.Lock()
        t = threading.Thread(target=self.loop, name="mcp-relay-" + kind, daemon=True)
        t.start()

    def loop(self):
        poller = select.poll()
        poller.register(self.r, select.POLLIN)
        while True:
            poller.poll()
            with self.lock:
                if not self.drain(1 << 16):
                    return

    def drain(self, limit):
        """Sends what the pipe holds, about limit bytes at most; False once
        the pipe has ended."""
        sent = 0
        while sent < limit:
            try:
                chunk = os.read(self.r, 1 << 16)
            except BlockingIOError:
                return True
            except OSError:
                return False
            if not chunk:
                return False
            self.chan.send(self.kind, chunk)
            sent += len(chunk)
        return True

    def sync(self, timeout):
        """Sends what was written before, unless the thread holds the pipe
        for longer than timeout (the engine not reading). A writer that
        goes on after the run has a MiB in; the rest follows it."""
        if self.lock.acquire(timeout=timeout):
            try:
                self.drain(1 << 20)
            finally:
                self.lock.release()


FLUSH_EVERY = 0.005  # seconds: output is written at least this often


class Flusher:
    """Writes out what the code's streams hold within FLUSH_EVERY of its
    writing, so output arrives as it is printed (and survives a kill on
    timeout) without a system call per line: a loop that prints 200,000
    lines made as many writes, each costly under gVisor (47 s there)."""

    def __init__(self):
        self.streams = []
        self.start()

    def start(self):
        """Starts the thread; a forked child calls it again, for its own
        thread, with an event and a lock no thread of the parent's holds."""
        kick, busy = threading.Event(), threading.Lock()
        self.kick, self.busy = kick, busy
        t = threading.Thread(target=self.loop, args=(kick, busy), name="mcp-flusher", daemon=True)
        t.start()

    def loop(self, kick, busy):
        while True:
            kick.wait()
            kick.clear()
            sleep(FLUSH_EVERY)
            with busy:
                self.flush_all()

    def before_fork(self):
        """Holds the thread off the streams until the fork is done: a
        child that inherits a stream's lock as the thread held it could
        never write."""
        self.busy.acquire()
        self.flush_all()

    def after_fork_in_parent(self):
        self.busy.release()

    def flush_all(self):
        for s in self.streams:
            try:
                s.flush()
            except Exception:
                pass


BURST = 64  # lines, each within FLUSH_EVERY of the last, written out one by one


class LineStream(io.TextIOWrapper):
    """A line-buffered text stream until BURST lines came in quick
    succession; the rest of such a burst is left to the flusher. So a
    print stays before what a subprocess or os.write writes after it, as
    under line buffering, and hook_spawns keeps a burst before them."""

    def __init__(self, fd, flusher):
        raw = io.FileIO(fd, "w", closefd=False)
        io.TextIOWrapper.__init__(self, io.BufferedWriter(raw, 1 << 16), encoding="utf-8",
                                  errors="backslashreplace", write_through=True)
        self._flusher = flusher
        self._last = 0.0
        self._lines = 0
        flusher.streams.append(self)

    def write(self, s):
        n = io.TextIOWrapper.write(self, s)
        if "\n" in s or "\r" in s:
            now = perf_counter()
            if now - self._last >= FLUSH_EVERY:
                self._lines = 0
            self._last = now
            self._lines += 1
            if self._lines <= BURST:
                self.flush()
                return n
        if not self._flusher.kick.is_set():
            self._flusher.kick.set()
        return n


def hook_spawns(flush):
    """Makes the calls that start a process write out the streams first,
    so that the new process's output comes after what was printed."""
    import _posixsubprocess

    def wrap(mod, name):
        real = getattr(mod, name, None)
        if real is None:
            return

        def call(*args, **kwargs):
            flush()
            return real(*args, **kwargs)

        setattr(mod, name, call)

    wrap(_posixsubprocess, "fork_exec")
    for name in ("system", "posix_spawn", "posix_spawnp"):
        wrap(os, name)


class PyplotHook:
    """Makes matplotlib.pyplot.show return figures when pyplot is imported,
    as a notebook's inline backend does, so code that shows and then closes
    its figures still gets them back."""

    def __init__(self, runner):
        self.runner = runner

    def find_spec(self, name, path, target=None):
        if name != "matplotlib.pyplot":
            return None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = PatchingLoader(spec.loader, self.runner)
                return spec
        return None


class PatchingLoader:
    def __init__(self, loader, runner):
        self.loader, self.runner = loader, runner

    def __getattr__(self, name):
        return getattr(self.loader, name)

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        runner = self.runner

        def show(*args, **kwargs):
            figs = runner.figures()  # taken and closed either way
            runner.shown.extend(figs[: max(0, MAX_FIGURES - len(runner.shown))])

        module.show = show


class Runner:
    def __init__(self, chan, relays):
        self.chan = chan
        self.relays = relays
        self.flusher = Flusher()
        self.stdout = LineStream(1, self.flusher)
        self.stderr = LineStream(2, self.flusher)
        # A fork (multiprocessing's) must not copy unwritten output into
        # the child, which would write it again.
        if hasattr(os, "register_at_fork"):
            os.register_at_fork(before=self.flusher.before_fork, after_in_parent=self.flusher.after_fork_in_parent,
                                after_in_child=self.flusher.start)
        hook_spawns(self.flusher.flush_all)
        self.stdin = io.open(os.devnull, "r")
        self.loop = None
        main = types.ModuleType("__main__")
        main.__dict__["__builtins__"] = builtins
        sys.modules["__main__"] = main
        self.ns = main.__dict__
        self.shown = []  # figures plt.show() took during the run
        sys.meta_path.insert(0, PyplotHook(self))
        warnings.filterwarnings("ignore", message=".*(non-interactive|non-GUI backend).*")

    def serve(self):
        while True:
            kind, payload = self.chan.recv()
            if kind is None:
                return
            if kind == "run":
                self.run(json.loads(payload.decode("utf-8")))

    def prepare(self):
        sys.stdout, sys.stderr, sys.stdin = self.stdout, self.stderr, self.stdin
        importlib.invalidate_caches()
        # Packages installed with pip --user after start-up live in a
        # directory that did not exist when site ran.
        if getattr(site, "ENABLE_USER_SITE", False):
            user_site = site.getusersitepackages()
            if os.path.isdir(user_site) and user_site not in sys.path:
                site.addsitedir(user_site)

    def run(self, req):
        begun = perf_counter()
        self.prepare()
        try:
            exit_code, result = self.execute(req["code"], req["id"])
        except BaseException:  # a bug here must not kill the interpreter
            traceback.print_exc()
            exit_code, result = 1, None
        figures, self.shown = (self.shown + self.figures())[:MAX_FIGURES], []
        self.sync(5)
        for png in figures:
            self.chan.send("fig", png)
        took_us = int((perf_counter() - begun) * 1e6)
        self.chan.send_json("done", {"id": req["id"], "exit_code": exit_code, "result": result, "took_us": took_us})

    def sync(self, timeout):
        """Returns once the relays have passed everything written so far."""
        for s in (self.stdout, self.stderr, sys.stdout, sys.stderr):
            try:
                s.flush()
            except Exception:
                pass
        for r in self.relays:
            r.sync(timeout)

    def hook_exit(self):
        """Makes os._exit in the interpreter deliver the output first (a
        forked child, which has no relays, writes out what it holds)."""
        pid = os.getpid()

        def _exit(code):
            try:
                if os.getpid() == pid:
                    self.sync(2)
                else:
                    self.flusher.flush_all()
            except BaseException:
                pass
            REAL_EXIT(code)

        os._exit = _exit

    def execute(self, code, n):
        filename = "<cell %d>" % n
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        flags = getattr(ast, "PyCF_ALLOW_TOP_LEVEL_AWAIT", 0)
        try:
            tree = ast.parse(code, filename, "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr):
                last = ast.Expression(tree.body.pop().value)
            body = compile(tree, filename, "exec", flags, True)
            tail = compile(last, filename, "eval", flags, True) if last is not None else None
        except SyntaxError:
            etype, value, _ = sys.exc_info()
            self.report(etype, value, None)
            return 1, None
        try:
            self.call(body, False)
            value = self.call(tail, True) if tail is not None else None
        except SystemExit as e:
            return self.exit_code(e), None
        except BaseException:
            self.report(*sys.exc_info())
            return 1, None
        if value is None:
            return 0, None
        self.ns["_"] = value
        try:
            text = repr(value)
        except BaseException:
            self.report(*sys.exc_info())
            return 1, None
        if len(text) > MAX_RESULT:
            text = text[: MAX_RESULT // 2] + "\n[... repr shortened ...]\n" + text[-MAX_RESULT // 2:]
        return 0, text

    def call(self, code, is_eval):
        if code.co_flags & CO_COROUTINE:
            if self.loop is None:
                import asyncio
                self.loop = asyncio.new_event_loop()
            return self.loop.run_until_complete(eval(code, self.ns))
        if is_eval:
            return eval(code, self.ns)
        exec(code, self.ns)
        return None

    def exit_code(self, e):
        code = e.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1

    def report(self, etype, value, tb):
        while tb is not None and tb.tb_frame.f_code.co_filename == RUNNER_FILE:
            tb = tb.tb_next
        traceback.print_exception(etype, value, tb, file=sys.stderr)

    def figures(self):
        plt = sys.modules.get("matplotlib.pyplot")
        if plt is None:
            return []
        out = []
        try:
            for num in plt.get_fignums():
                fig = plt.figure(num)
                if not (fig.axes or fig.lines or fig.texts or fig.images or fig.patches):
                    continue  # an empty figure, as notebooks skip it
                buf = io.BytesIO()
                fig.savefig(buf, format="png", bbox_inches="tight")
                out.append(buf.getvalue())
        except Exception:
            traceback.print_exc()
        finally:
            try:
                plt.close("all")
            except Exception:
                pass
        return out


def main():
    diag = os.dup(2)
    try:
        chan = Channel(os.dup(0), os.dup(1))
        devnull = os.open(os.devnull, os.O_RDWR)
        os.dup2(devnull, 0)
        os.close(devnull)
        relays = [Relay(chan, "out", 1), Relay(chan, "err", 2)]
        runner = Runner(chan, relays)
        runner.hook_exit()
        chan.send_json("ready", {"pid": os.getpid(), "version": "python %d.%d.%d runner %s" % (sys.version_info[:3] + (VERSION,))})
    except BaseException as e:
        os.write(diag, ("mcp-sandbox runner: start failed: %r\n" % (e,)).encode())
        REAL_EXIT(70)
    try:
        runner.serve()
    except BaseException as e:
        os.write(diag, ("mcp-sandbox runner: %r\n" % (e,)).encode())
        REAL_EXIT(70)
    REAL_EXIT(0)


main()
