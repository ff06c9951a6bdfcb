# bash: arrays, associative arrays, here-docs, process substitution, traps,
# job control. Output only what is the same on every run.
set -u
arr=(zero "one two" three)
arr+=(four)
echo "len=${#arr[@]} second=${arr[1]} slice=${arr[*]:1:2}"
for i in "${!arr[@]}"; do printf '%s:%s\n' "$i" "${arr[$i]}"; done
unset 'arr[2]'
echo "after unset: ${!arr[*]} / ${arr[*]}"
declare -A color=([apple]=red [banana]=yellow [cherry]="dark red")
color[lime]=green
for k in $(printf '%s\n' "${!color[@]}" | sort); do echo "$k=${color[$k]}"; done
echo "count=${#color[@]} has-apple=${color[apple]+yes} has-kiwi=${color[kiwi]-no}"
name=world
cat <<EOT
hello $name
  indented $(( 6 * 7 ))
EOT
cat <<'EOT'
literal $name $(not run)
EOT
tr a-z A-Z <<<"here string"
cat <<-EOT
	tabs stripped
	EOT
paste -d' ' <(printf '%s\n' a b c) <(printf '%s\n' x y z)
cmp_out=$(comm -3 <(printf '%s\n' a b c) <(printf '%s\n' a c x) | tr -d '\t' | tr '\n' ,); echo "comm $cmp_out"
while read -r n; do echo "read $n"; done < <(seq 3)
exec 3> >(tr a-z A-Z > ps.out)
echo "to the substitution" >&3
exec 3>&-
wait $!
cat ps.out
trap 'echo "USR1 caught"' USR1
kill -USR1 $$
echo "after USR1"
f() { trap 'echo "RETURN from f"' RETURN; echo in f; }
f
trap - RETURN
( trap 'echo "subshell TERM"; exit 3' TERM; kill -TERM $BASHPID; echo not reached ) ; echo "subshell status $?"
err() { echo "ERR trap line $1"; }
trap 'err $LINENO' ERR
false
trap - ERR
set -m
sleep 30 &
bgpid=$!
jobs
read -r -a st < /proc/$bgpid/stat
[ "${st[4]}" = "$bgpid" ] && echo "job is its own process group"
read -r -a me < /proc/$$/stat
[ "${me[4]}" != "$bgpid" ] && echo "shell is in another group"
kill -STOP %1
until read -r -a st < /proc/$bgpid/stat && [ "${st[2]}" = T ]; do sleep 0.05; done
echo "job stopped"
bg %1 2>/dev/null
until read -r -a st < /proc/$bgpid/stat && [ "${st[2]}" != T ]; do sleep 0.05; done
echo "job continued"
{ kill %1; wait $bgpid; echo "killed job status $?"; } 2>/dev/null
( exit 7 ) &
wait $!; echo "job status $?"
sleep 0.2 & sleep 0.1 &
wait; echo "all waited"
set +m
coproc CO { read -r l; echo "coproc got $l"; }
echo ping >&"${CO[1]}"
read -r reply <&"${CO[0]}"; echo "$reply"
wait
printf '%05.1f|%-6s|%x|%q\n' 3.14159 ab 255 'a b'
s="The Quick Brown Fox"
echo "${s,,} ${s^^} ${s// /_} ${s#* } ${s%% *} ${#s}"
[[ "abc123" =~ ^([a-z]+)([0-9]+)$ ]] && echo "re ${BASH_REMATCH[1]} ${BASH_REMATCH[2]}"
mapfile -t lines < <(printf 'l1\nl2\nl3\n'); echo "mapfile ${#lines[@]} ${lines[2]}"
echo $(( 2**40 )) $(( -7 / 2 )) $(( 7 % -3 ))
shopt -s extglob; v=aaabbb; echo "${v##+(a)}"
trap 'echo "EXIT trap ran"' EXIT
