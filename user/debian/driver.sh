#!/bin/bash
# Runs every workload of the debian test layer, on Trellis (as /init's
# command) and on the host (in a chroot of the same tree). Each workload
# runs in an empty directory with stdin from /dev/null; its stdout and
# stderr go to out/NAME.out, followed by its exit status. One console
# line per workload tells the harness how far the run got.
T=/opt/debian-tests
# The same environment on both kernels, whatever started us.
[ -n "$DEBIAN_CLEAN_ENV" ] || exec /usr/bin/env -i DEBIAN_CLEAN_ENV=1 /bin/bash "$0" "$@"
export LC_ALL=C TZ=UTC PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root
umask 022
rm -rf "$T/out" /tmp/dt
mkdir -p "$T/out"
run() {
    local name=$1; shift
    mkdir -p "/tmp/dt/$name"
    ( cd "/tmp/dt/$name" && exec timeout -k 5 300 "$@" ) < /dev/null > "$T/out/$name.out" 2>&1
    local st=$?
    echo "exit $st" >> "$T/out/$name.out"
    echo "DEBIAN-DONE $name $st"
}
want() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }
ONLY="$*"
want bash && run bash /bin/bash "$T/bash.sh"
want coreutils && run coreutils /bin/bash "$T/coreutils.sh"
want perl && run perl /usr/bin/perl "$T/perl.pl"
want sqlite3 && run sqlite3 /bin/bash "$T/sqlite.sh"
for py in json sqlite threading multiprocessing subprocess hashlib asyncio; do
    want "python-$py" && run "python-$py" /usr/bin/python3 "$T/py_$py.py"
done
want python-import && run python-import /usr/bin/python3 -c 'import sqlite3, threading, subprocess; print(42)'
if [ -d "$T/hostroot" ]; then
    want host-bash && run host-bash chroot "$T/hostroot" /usr/bin/bash -c \
        'declare -A m=([k]=v); a=(1 2 3); echo "${BASH_VERSINFO[0]} ${m[k]} ${#a[@]} $(( 6 * 7 ))"; /usr/bin/bash -c "exit 4"; echo "child $?"'
    want host-python && run host-python chroot "$T/hostroot" /usr/bin/python3.11 -c \
        'import sys, json, hashlib, sqlite3, threading, subprocess; print(sys.version_info[:2] >= (3, 11), json.dumps({"a": [1, 2]}), hashlib.sha256(b"x").hexdigest()[:16], sqlite3.connect(":memory:").execute("select 6*7").fetchone()[0], subprocess.run(["/usr/bin/bash", "-c", "echo sub"], capture_output=True, text=True).stdout.strip())'
fi
echo DEBIAN-ALL-DONE
