# coreutils, findutils, grep, sed, gawk, tar, gzip pipelines.
set -e
mkdir -p d/a/b d/c
for i in $(seq 1 40); do echo "line $((i % 7)) word$((i % 5))" > "d/a/f$i.txt"; done
for i in 1 2 3; do seq 1 $((i * 100)) > "d/c/n$i"; done
printf 'x\ny\n' > d/a/b/deep.txt
cat d/a/*.txt | sort | uniq -c | sort -n -k1,1 -k2
cat d/a/*.txt | awk '{print $3}' | sort | uniq -c | sort -rn
find d -type f -name '*.txt' | sort | head -5
find d -type f -name 'n*' -exec wc -l {} \; | sort
find d -type f -exec sh -c 'echo "$(basename "$1") $(wc -c < "$1")"' _ {} \; | sort | md5sum
find d -type d | sort
find d -name 'f1*' -print0 | sort -z | xargs -0 cat | wc -l
seq 1 200 | xargs -n 7 -P 4 sh -c 'for x; do echo $((x * x)); done' _ | sort -n | md5sum
seq 1 30 | xargs -P 3 -I{} sh -c 'echo {} > out-{}.n'; cat out-*.n | sort -n | tr '\n' ' '; echo
tar -cf - d | gzip -9 > d.tar.gz
mkdir x && gzip -dc d.tar.gz | tar -xf - -C x
[ "$(cd d && find . -type f | sort | xargs md5sum | md5sum)" = "$(cd x/d && find . -type f | sort | xargs md5sum | md5sum)" ] && echo "tar gzip round trip ok"
tar -czf d2.tgz -C d a && tar -tzf d2.tgz | sort | head -3
gzip -c d/c/n3 | gzip -t && echo "gzip -t ok"
[ "$(gzip -c d/c/n3 | gunzip | md5sum)" = "$(md5sum < d/c/n3)" ] && echo "gunzip round trip ok"
sha256sum d/c/n1 d/c/n2 | sed 's/  / /'
md5sum d/a/b/deep.txt
grep -rl 'word3' d | sort | head -3
grep -c 'line 0' d/a/*.txt | awk -F: '{s += $2} END {print "line0 total", s}'
sed -n '5,8p; 100q' d/c/n3 | paste -sd+
sed -e 's/line \([0-9]\)/L<\1>/' d/a/f3.txt
awk 'BEGIN { for (i = 1; i <= 5; i++) a[i] = i * i; for (i = 5; i >= 1; i--) printf "%d ", a[i]; print ""; printf "%.3f %s\n", atan2(0, -1), toupper("gawk") }'
awk -F, '{ n[$1] += $2 } END { PROCINFO["sorted_in"] = "@ind_str_asc"; for (k in n) print k, n[k] }' <<'CSV'
b,2
a,1
b,5
c,-1
a,10
CSV
seq 1 10 | tac | head -3 | tr '\n' ,; echo
seq 1 100000 | sort -R --random-source=d/c/n3 | sort -n | tail -1
printf 'b 2\na 1\nc 3\n' | sort -k2,2n | cut -d' ' -f1 | tr -d '\n'; echo
printf '%s\n' one two three | nl | expand
echo "abc" | od -An -c
seq 5 | split -l 2 - part_ && ls part_* && cat part_ab
dd if=/dev/zero bs=1k count=64 2>/dev/null | wc -c
truncate -s 1M sparse && stat -c '%s' sparse && du -k --apparent-size sparse
ln -s d/c/n1 link && readlink link && ln d/c/n2 hard && stat -c '%h' d/c/n2
chmod 640 d/c/n1 && stat -c '%a %F' d/c/n1 link
touch -d '2001-02-03 04:05:06 UTC' d/c/n1 && TZ=UTC date -r d/c/n1 '+%F %T'
TZ=UTC date -d @1000000000 '+%F %T %Z %s'
basename /a/b/c.txt .txt; dirname /a/b/c.txt; realpath -m /a/../b/./c
id -u; id -gn; whoami
env -i A=1 B=2 env | sort
test -x /bin/sh && echo "sh executable"
expr 6 \* 7; factor 360; numfmt --to=iec 1048576
yes | head -3
echo done
