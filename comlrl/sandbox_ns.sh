# The set-up of one sandboxed run in namespace mode (nbs/21_sandbox.ipynb, "Launching a run"). Not generated: edit
# this file itself. The trainer passes its text to `sh -c`, which runs as PID 1 of the run's new PID namespace, as root
# of its mount namespace, and stays the judge's parent until it exits.
#   $1  fstab to mount first (scratch tmpfs, a staging /tmp, hidden home directories, interpreter paths bound back)
#   $2  the run's fresh uid (owner of the private /tmp), or - (user-namespace mode)
#   $3  size of the private /tmp, MiB
#   $4  fstab to mount once the private /tmp is up (interpreter paths under /tmp), or -
#   $5 ... the judge's command line: it starts the program's process itself, then drops its own privileges
set -e
A=; [ "$4" = - ] || A=$(cat "$4")  # read now: the file lives in the trainer's /tmp, about to be covered
mount -a -i -T "$1"
O=; [ "$2" = - ] || O=",uid=$2,gid=$2"
mount -i -t tmpfs -o "size=$3m,mode=700,nosuid,nodev$O" sbx-work /tmp
if [ -n "$A" ]; then printf '%s\n' "$A" > /tmp/.sbx-fstab; mount -a -i -T /tmp/.sbx-fstab; rm -f /tmp/.sbx-fstab; fi
mount -i -t proc -o nosuid,nodev,noexec proc /proc 2>/dev/null || true  # a private /proc (this PID namespace's)
cd /tmp
shift 4
# not `exec`: this shell stays PID 1, and when it exits the kernel kills whatever is left in the namespace
"$@"
