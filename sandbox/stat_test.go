package sandbox_test

// statOwnerMode and statOwner print "uid mode" and "uid" of their
// arguments, one line each, as `stat -c` would; gVisor refuses the statx
// call that coreutils' stat and ls make.
const (
	statOwnerMode = `python3 -c 'import os, sys
for p in sys.argv[1:]: st = os.lstat(p); print(st.st_uid, format(st.st_mode & 0o7777, "o"))'`
	statOwner = `python3 -c 'import os, sys
for p in sys.argv[1:]: print(os.lstat(p).st_uid)'`
)
