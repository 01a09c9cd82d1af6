#!/bin/bash
# Token-mode Overcooked settings only (rerun after the stub seeded its replies by worker pid).
cd /tmp/rtg_work
model=$1
S=""
for l in E H; do S="$S overcooked_${l}_4096_reactive_4096 overcooked_${l}_4096_planning_0 overcooked_${l}_4096_agile_1024"; done
/tmp/rtg_venv/bin/python /tmp/rtg_driver/drive.py --planning-model-config configs/$model-planning.yaml \
  --reactive-model-config configs/$model-reactive.yaml --time_unit token --log_dir runs_oc/$model \
  --seed_num 2 --settings $S > /tmp/rtg_work/run_oc_${model}.out 2>&1
echo "exit $?" >> /tmp/rtg_work/run_oc_${model}.out
