#!/usr/bin/env bash
# Self-play for the corpus on a Slurm cluster (issue 67): a job array whose task K plays
# GAMES games into a corpus directory of its own, then one job, run once every task has
# succeeded, that enters the tasks' chunks into the main corpus.
#
#   scripts/datagen-slurm.sh --into CORPUS --out DIR --tasks N --games GAMES [--base B]
#       [--cpus C] [--time T] [--actuary BIN] [--print] [-- DATAGEN-OPTIONS...]
#
#   --into CORPUS  the main corpus (e.g. data/chess/selfplay); the merge makes it if absent
#   --out DIR      the tasks' corpora DIR/task-K, the job scripts DIR/datagen.sbatch and
#                  DIR/merge.sbatch, their logs (DIR/slurm-JOB_K.log, DIR/merge-JOB.log)
#                  and a copy of the binary (a rebuild while the jobs wait changes nothing)
#   --tasks N      array tasks, K = 0 .. N-1
#   --games GAMES  games per task
#   --base B       first game id of task 0 [default: one past CORPUS's largest id, 0 for
#                  none]; task K plays ids B+K*GAMES .. B+(K+1)*GAMES-1
#   --cpus C       CPUs per task, played as C game threads [1]
#   --time T       time limit per task, as sbatch --time takes it [the partition's default]
#   --actuary BIN  the binary the jobs run [target/release/actuary]
#   --print        write DIR's scripts and print them instead of submitting them
#   -- ...         more `actuary datagen` options for every task (--nodes, --seed, --book, ...)
#
# Task K runs
#   actuary datagen --corpus DIR/task-K --first-id $((B + K*GAMES)) --games GAMES --threads C ...
# so the tasks' game ids are disjoint and, a game being a function of (id, settings), so
# are their games. A killed task resubmitted (sbatch --array=K DIR/datagen.sbatch) plays
# only the rest of its series. The merge job (afterok on the array) runs
#   actuary corpus-merge --into CORPUS DIR/task-0 ... DIR/task-(N-1); actuary corpus CORPUS
# which refuses, writing nothing, a torn or damaged chunk, a duplicate, shared game ids, and
# ids not above CORPUS's largest: so nothing else may add games to CORPUS between this
# submission and the merge (or give a --base above all it will hold). If a task fails the
# merge job is cancelled; resubmit the task, then `sbatch DIR/merge.sbatch`. A merge that
# stopped halfway is finished by submitting it again (chunks entered already are skipped).
# The jobs run in the directory this script is started from, so relative paths (the
# default book) are read from there: start it at the repository root.
#
# Prints `array JOBID` and `merge JOBID`, or with --print the two scripts.
set -euo pipefail

die() {
  echo "error: datagen-slurm.sh: $*" >&2
  exit 2
}
usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
  exit 0
}

into='' out='' tasks='' games='' base='' cpus=1 time='' bin=target/release/actuary print=0
while [ $# -gt 0 ]; do
  case $1 in
    --into | --out | --tasks | --games | --base | --cpus | --time | --actuary)
      [ $# -ge 2 ] || die "$1 needs a value"
      case $1 in
        --into) into=$2 ;;
        --out) out=$2 ;;
        --tasks) tasks=$2 ;;
        --games) games=$2 ;;
        --base) base=$2 ;;
        --cpus) cpus=$2 ;;
        --time) time=$2 ;;
        --actuary) bin=$2 ;;
      esac
      shift 2
      ;;
    --print) print=1; shift ;;
    -h | --help) usage ;;
    --) shift; break ;;
    *) die "unknown option \`$1\` (see --help)" ;;
  esac
done
[ -n "$into" ] || die "--into CORPUS is required"
[ -n "$out" ] || die "--out DIR is required"
for v in tasks games cpus; do
  [[ ${!v} =~ ^[1-9][0-9]{0,8}$ ]] || die "--$v must be a positive integer (got \`${!v}\`)"
done
[[ -z $base || $base =~ ^[0-9]{1,15}$ ]] || die "--base must be a game id below 10^15 (got \`$base\`)"
[[ -z $time || $time =~ ^[0-9:-]+$ ]] || die "--time \`$time\`: use sbatch's forms (MM, HH:MM:SS, D-HH, ...)"
[ -x "$bin" ] && [ -f "$bin" ] || die "--actuary $bin: not an executable (cargo build --release -p actuary)"
# The target's part being written would be refused by the merge after the whole array ran.
[ ! -e "$into/current.part" ] || die "$into has a part being written: close it first (actuary datagen --corpus $into --close)"
if [ -z "$base" ]; then
  base=0
  if [ -f "$into/manifest.jsonl" ]; then
    last=$(grep -o '"last_game":[0-9]*' "$into/manifest.jsonl" | cut -d: -f2 | sort -n | tail -n 1)
    if [ -n "$last" ]; then base=$((last + 1)); fi
  fi
fi

here=$(pwd)
into=$(realpath -m -- "$into")
out=$(realpath -m -- "$out")
# Slurm splits #SBATCH lines itself: the log directory must be a plain path.
[[ $out =~ ^[A-Za-z0-9/._+,@=~-]+$ ]] || die "--out $out: only letters, digits and /._+,@=~- (it goes on #SBATCH lines)"
mkdir -p "$out"
# A copy the jobs run; renamed into place, so a running task's binary is never rewritten.
cp -- "$bin" "$out/.actuary.tmp"
mv -f -- "$out/.actuary.tmp" "$out/actuary"

q() { printf '%q' "$1"; }
extra=''
if [ $# -gt 0 ]; then extra=$(printf ' %q' "$@"); fi
srcs=''
for ((k = 0; k < tasks; k++)); do srcs+=" $(q "$out/task-$k")"; done
exe=$(q "$out/actuary")

cat > "$out/datagen.sbatch" <<EOF
#!/bin/bash
# actuary datagen as a job array (scripts/datagen-slurm.sh): task K plays game ids
# $base+K*$games .. $base+(K+1)*$games-1 into $out/task-K.
# A killed task resumes its own series when resubmitted: sbatch --array=K $out/datagen.sbatch
#SBATCH --job-name=actuary-datagen
#SBATCH --array=0-$((tasks - 1))
#SBATCH --cpus-per-task=$cpus
#SBATCH --output=$out/slurm-%A_%a.log
${time:+#SBATCH --time=$time}
set -euo pipefail
cd $(q "$here")
k=\$SLURM_ARRAY_TASK_ID
exec $exe datagen --corpus $(q "$out")/task-\$k --first-id \$(($base + k * $games)) \\
  --games $games --threads "\${SLURM_CPUS_PER_TASK:-$cpus}"$extra
EOF

cat > "$out/merge.sbatch" <<EOF
#!/bin/bash
# Enter the chunks of the array's task corpora into $into (scripts/datagen-slurm.sh).
# Submitting it again finishes a merge that stopped halfway (chunks entered already are skipped).
#SBATCH --job-name=actuary-datagen-merge
#SBATCH --output=$out/merge-%j.log
#SBATCH --kill-on-invalid-dep=yes
set -euo pipefail
cd $(q "$here")
$exe corpus-merge --into $(q "$into")$srcs
$exe corpus $(q "$into")
EOF

if [ "$print" = 1 ]; then
  cat "$out/datagen.sbatch"
  echo
  cat "$out/merge.sbatch"
  exit 0
fi
jid=$(sbatch --parsable "$out/datagen.sbatch")
jid=${jid%%;*} # --parsable prints JOBID[;CLUSTER]
mid=$(sbatch --parsable --dependency="afterok:$jid" "$out/merge.sbatch")
mid=${mid%%;*}
echo "array $jid"
echo "merge $mid"
