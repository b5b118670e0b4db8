# A hostile command agent, for the attack tests: it speaks the agent's
# protocol (package agent) and lies. A command's text picks what it does
# ("hostile:MODE"); the file tools' tar requests read the mode from
# /workspace/tar-mode; a list request is answered with an entry outside the
# directory asked for. It logs each request it gets to
# /workspace/hostile-PID.log. It answers a kill, so that the connection
# survives a call's timeout and the next attack is made by it too.
import io, json, os, select, sys, tarfile, threading, time

# Every frame goes out whole, by os.write under one lock (write_all). Sent
# through sys.stdout.buffer, the flood's frames arrived garbled on the test
# cluster under load (3 runs of 3; none of 8 since), and the engine then
# ended the connection, as it must. Under gVisor the attached stdout may
# be non-blocking: write_all waits out EAGAIN.
os.set_blocking(0, True)
os.set_blocking(1, True)
inp = sys.stdin.buffer


def write_all(b):
    v = memoryview(b)
    while v:
        try:
            v = v[os.write(1, v):]
        except BlockingIOError:
            select.select([], [1], [])
nonce = inp.readline().strip().decode()
lock = threading.Lock()
killed = set()


def send(kind, payload=b""):
    with lock:
        write_all(("%s %s %d\n" % (nonce, kind, len(payload))).encode() + payload)


def exit_(i, code):
    send("exit", json.dumps({"id": i, "code": code}).encode())


def data(i, b, stream="out"):
    for k in range(0, len(b), 32768):
        if i in killed:
            return False
        send(stream, b"%d\n" % i + b[k:k + 32768])
    return True


def hdr(name, typ=tarfile.REGTYPE, size=0):
    ti = tarfile.TarInfo(name)
    ti.type, ti.size, ti.mode, ti.mtime = typ, size, 0o644, time.time()
    return ti.tobuf(format=tarfile.GNU_FORMAT, encoding="utf-8", errors="surrogateescape")


def pad(n):
    return b"\0" * (-n % 512)


def tar_reply(i, mode):
    top = hdr("top", tarfile.DIRTYPE)
    if mode == "endless":  # entries the host skips, for ever
        data(i, top)
        n = 0
        while data(i, hdr("top/f%d" % n, tarfile.FIFOTYPE)):
            n += 1
        return
    if mode == "slow":  # a byte at a time, never done
        for b in top:
            if i in killed:
                return
            data(i, bytes([b]))
            time.sleep(1)
        return
    if mode == "huge":  # a sparse-looking 50 GB file
        data(i, hdr("top", size=50 << 30) + b"x" * 512)
    elif mode == "lying":  # says 1 MB, sends 10 bytes
        data(i, hdr("top", size=1 << 20) + b"x" * 10)
    elif mode == "dotdot":
        body = b"pwned\n"
        data(i, top + hdr("top/../../../../escape.txt", size=len(body)) + body + pad(len(body)) + b"\0" * 1024)
    elif mode == "names":  # terminal escapes and invalid UTF-8 in names
        body = b"x"
        bad = "top/\x1b]0;pwned\x07\x1b[2J" + b"\xff\xfe".decode("utf-8", "surrogateescape")
        data(i, top + hdr(bad, size=1) + body + pad(1) + b"\0" * 1024)
    elif mode == "dup":  # the same file twice, then a name that differs only in case
        body = b"one"
        e = hdr("top/a.txt", size=3) + body + pad(3)
        data(i, top + e + hdr("top/A.txt", size=3) + body + pad(3) + e + b"\0" * 1024)
    exit_(i, 0)


def run(req):
    i, argv = req["id"], req["argv"]
    if argv and argv[0].endswith("/tar") and "-c" in argv:
        try:
            mode = open("/workspace/tar-mode").read().strip()
        except OSError:
            mode = ""
        tar_reply(i, mode)
        return
    cmd = argv[-1] if argv else ""
    if cmd.startswith("hostile:tar-mode ") or cmd.startswith("hostile:stream-mode "):
        name = cmd.split()[0][len("hostile:"):]
        open("/workspace/" + name, "w").write(cmd.split()[1])
        exit_(i, 0)
        return
    if cmd == "hostile:flood":  # endless output, never an exit
        while data(i, b"o" * 60000) and data(i, b"\x1b[2J" * 15000, "err"):
            pass
        return
    if cmd == "hostile:others":  # output and an exit for other commands
        data(i + 1, b"not yours")
        data(i + 7, b"not yours")
        exit_(i + 1, 99)
        exit_(i + 1000, 98)
        data(i, b"mine\n")
        exit_(i, 0)
        return
    if cmd == "hostile:bigframe":  # a frame over the engine's bound
        with lock:
            write_all(("%s out 100000000\n" % nonce).encode() + b"x" * 100000)
        return
    data(i, b"hostile agent here\n")
    exit_(i, 0)


def on_dial(req):
    # What it answers a dial with: /workspace/stream-mode says.
    i = req["id"]
    try:
        mode = open("/workspace/stream-mode").read().strip()
    except OSError:
        mode = ""
    if mode not in ("flood", "stranger"):
        pending.add(i)  # before "dialed": the request may follow at once
    send("dialed", json.dumps({"id": i}).encode())
    if mode == "flood":  # a response head, then far beyond the credit given
        send("data", b"%d\nHTTP/1.1 200 OK\r\nContent-Length: 1000000000\r\n\r\n" % i)
        chunk = b"%d\n" % i + b"f" * 32768
        for _ in range(8192):  # 256 MB
            send("data", chunk)
    elif mode == "stranger":  # data for a stream the server never opened
        send("data", b"%d\nx" % (i + 1000))
    # else: a well-behaved answer, once the request arrives (see "data" below)


# Streams whose well-behaved answer waits for their request: an HTTP
# server reads before it answers, and a client that gets an answer to a
# request it has not sent yet calls it unsolicited.
pending = set()


def answer(i):
    send("data", b"%d\nHTTP/1.1 200 OK\r\nContent-Length: 7\r\nConnection: close\r\n\r\nhostile" % i)
    send("eof", json.dumps({"id": i}).encode())


# An agent of version 1 (no streams) when /workspace/agent-v1 exists.
if os.path.exists("/workspace/agent-v1"):
    send("ready", b'{"pid":%d,"version":"1"}' % os.getpid())
else:
    send("ready", b'{"pid":%d,"version":"2","streams":true}' % os.getpid())
while True:
    line = inp.readline()
    if not line:
        break
    _, kind, n = line.decode().split()
    payload = inp.read(int(n))
    if kind == "start":
        open("/workspace/hostile-%d.log" % os.getpid(), "a").write("start\n")
        threading.Thread(target=run, args=(json.loads(payload),), daemon=True).start()
    elif kind == "file":
        req = json.loads(payload)
        open("/workspace/hostile-%d.log" % os.getpid(), "a").write("file %s\n" % req.get("op"))
        if req.get("op") == "list":  # an entry outside the directory asked for
            data(req["id"], b'{"p":"../../etc/shadow","s":1,"m":420,"t":0}\n')
            send("filedone", json.dumps({"id": req["id"], "path": req["path"], "n": 1}).encode())
    elif kind == "data":
        i = int(payload.split(b"\n", 1)[0])
        if i in pending:
            pending.discard(i)
            answer(i)
    elif kind == "dial":
        threading.Thread(target=on_dial, args=(json.loads(payload),), daemon=True).start()
    elif kind == "kill":
        i = json.loads(payload)["id"]
        killed.add(i)
        exit_(i, 137)
    elif kind == "killall":
        break
