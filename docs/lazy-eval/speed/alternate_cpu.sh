#!/bin/bash
# usage: alternate_cpu.sh RUNS LABEL_A "CMD_A" LABEL_B "CMD_B"
# one line per run: run label nodes wall_nps cpu_seconds cpu_nps (cpu = user + sys of the bench process)
runs=$1; la=$2; ca=$3; lb=$4; cb=$5
for i in $(seq 1 $runs); do
  for pair in "$la|$ca" "$lb|$cb"; do
    label=${pair%%|*}; cmd=${pair#*|}
    out=$( { /usr/bin/time -f "CPU %U %S" $cmd | tail -1; } 2>&1 )
    nodes=$(echo "$out" | grep -o "Bench: [0-9]*" | awk '{print $2}')
    nps=$(echo "$out" | grep -o "[0-9]* nps" | awk '{print $1}')
    cpu=$(echo "$out" | grep "^CPU" | awk '{print $2+$3}')
    echo "$i $label $nodes $nps $cpu $(awk -v n=$nodes -v c=$cpu 'BEGIN{printf "%d", n/c}')"
  done
done
