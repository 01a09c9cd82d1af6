#!/bin/bash
# Runs RealtimeGym's agile_eval (through drive.py) for every setting; cwd /tmp/rtg_work.
cd /tmp/rtg_work
PY=/tmp/rtg_venv/bin/python
unit=$1; model=$2
if [ $unit = token ]; then tp=4096; r=4096; a=1024; else tp=1; r=1; a=1; fi
S=""
for g in freeway snake overcooked; do for l in E H; do
  S="$S ${g}_${l}_${tp}_reactive_${r} ${g}_${l}_${tp}_planning_0 ${g}_${l}_${tp}_agile_${a}"
done; done
$PY /tmp/rtg_driver/drive.py --planning-model-config configs/$model-planning.yaml \
  --reactive-model-config configs/$model-reactive.yaml --time_unit $unit --log_dir runs/$model \
  --seed_num 2 --settings $S > /tmp/rtg_work/run_${unit}_${model}.out 2>&1
echo "exit $?" >> /tmp/rtg_work/run_${unit}_${model}.out
