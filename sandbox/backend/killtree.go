package backend

// KillTreeScript stops (SIGSTOP) every process in the tree of $1 — its
// descendants, its process group and its session — until no new one
// appears, then kills them all. Stopping first means a fork bomb cannot
// outrun the walk. It uses only sh builtins and /proc, so it works in any
// image that has /bin/sh. Run it as
// sh -c KillTreeScript NAME PID, as the process's user.
const KillTreeScript = `root=$1; set=" $root "; kill -STOP "$root" 2>/dev/null
n=0
while [ $n -lt 50 ]; do
  n=$((n+1)); grew=
  for d in /proc/[0-9]*; do
    p=${d#/proc/}
    [ "$p" = "$$" ] && continue
    case "$set" in *" $p "*) continue;; esac
    read -r line < "$d/stat" 2>/dev/null || continue
    rest=${line##*) }
    set -- $rest
    if [ "$3" = "$root" ] || [ "$4" = "$root" ]; then :; else
      case "$set" in *" $2 "*) ;; *) continue;; esac
    fi
    kill -STOP "$p" 2>/dev/null; set="$set$p "; grew=1
  done
  [ -z "$grew" ] && break
done
for p in $set; do kill -KILL "$p" 2>/dev/null; done
exit 0`
