// frenzy-place-side-tasks on a hand-written 2-stage 1F1B schedule (stage 1
// twice as slow as stage 0; test/Analysis/bubbles.mlir derives its bubbles):
// stage 0 idles [2, 7] s and [9, 13] s, stage 1 [0, 1] s and [13, 15] s.
// With the 5% time margin they hold 4.75, 3.8, 0.95 and 1.9 s; the 10%
// memory margin keeps 819.2 MiB of the 8 GiB cpu ranks free.
// RUN: frenzy-opt %s -frenzy-place-side-tasks="side-tasks=%inputs/sidetasks/mixed.yaml cluster=%src/examples/cpu-4.yaml" 2>%t.err | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.err
//
// pagerank (0.5 s a step, priority 2) goes first: 9, 7, 1 and 3 steps.
// resize (a preemptible process, 3 s of work) takes what is left of each
// bubble: 0.25, 0.3, 0.45 and 0.4 s, 1.4 s in all, 1 whole step.
// CHECK: frenzy.side_tasks = {gpu_seconds = 1.140000e+01 : f64, idle_gpu_seconds = 1.200000e+01 : f64, memory_margin = 1.000000e-01 : f64,
// CHECK-SAME: slots = [{before = "B0", memory_bytes = 536870912 : i64, pipeline = 0 : i64, seconds = 4.500000e+00 : f64, stage = 0 : i64, start = 2.000000e+00 : f64, steps = 9 : i64, task = 0 : i64},
// CHECK-SAME: {before = "B1", {{.*}}seconds = 3.500000e+00 : f64, stage = 0 : i64, start = 9.000000e+00 : f64, steps = 7 : i64, task = 0 : i64},
// CHECK-SAME: {before = "F0", {{.*}}seconds = 5.000000e-01 : f64, stage = 1 : i64, start = 0.000000e+00 : f64, steps = 1 : i64, task = 0 : i64},
// CHECK-SAME: {before = "reduce", {{.*}}seconds = 1.500000e+00 : f64, stage = 1 : i64, start = 1.300000e+01 : f64, steps = 3 : i64, task = 0 : i64},
// CHECK-SAME: {before = "B0", memory_bytes = 1073741824 : i64, pipeline = 0 : i64, seconds = 2.500000e-01 : f64, stage = 0 : i64, start = 6.500000e+00 : f64, steps = 0 : i64, task = 1 : i64},
// CHECK-SAME: tasks = [{gpu_seconds = 1.000000e+01 : f64, kind = "step", memory_bytes = 536870912 : i64, name = "pagerank", placed_steps = 20 : i64, priority = 2 : i64, steps = -1 : i64, why = ""},
// CHECK-SAME: {gpu_seconds = 1.4{{0*[0-9]*}}{{(e\+00)?}} : f64, kind = "process", {{.*}}name = "resize", placed_steps = 1 : i64, {{.*}}why = "placed 1 of 3 steps per training step: the bubbles hold no more"},
//
// REPORT: side tasks: 5 task(s), 8 slot(s), harvested 11400.000 GPU-ms per training step of 12000.000 idle GPU-ms (95.0%)
// REPORT-NEXT: pagerank (step, priority 2): 20 step(s) per training step in 4 slot(s), 10000.000 GPU-ms
// REPORT-NEXT: resize (process, priority 1): 1 step(s) per training step in 4 slot(s), 1400.000 GPU-ms; placed 1 of 3 steps per training step: the bubbles hold no more
// A task larger than any bubble: said so, nothing placed.
// REPORT-NEXT: finetune (step, priority 0): not placed: one step takes 20000.000 ms on cpu; the largest bubble it fits in memory is 4750.000 ms (less the 5.00% margin): larger than any bubble, nothing placed
// REPORT-NEXT: bigmem (step, priority 0): not placed: needs 7680.0 MiB per GPU; the most free memory in any bubble, less the 10.00% margin, is 6348.8 MiB
// REPORT-NEXT: a100-only (step, priority 0): not placed: no step time for GPU type(s) cpu: give 'seconds' for them, or flops/bytes
// REPORT-NEXT: p0 s0 (cpu x1): harvested 8550.000 ms of 9000.000 ms idle per GPU
// REPORT-NEXT: p0 s1 (cpu x1): harvested 2850.000 ms of 3000.000 ms idle per GPU

// The recorded slots round-trip through the printed IR.
// RUN: frenzy-opt %s -frenzy-place-side-tasks="side-tasks=%inputs/sidetasks/mixed.yaml cluster=%src/examples/cpu-4.yaml" 2>/dev/null | frenzy-opt | FileCheck %s

// Bad input: one error line.
// RUN: not frenzy-opt %s -frenzy-place-side-tasks 2>&1 | FileCheck %s --check-prefix=NOFILE
// NOFILE: error: frenzy-place-side-tasks needs side-tasks=FILE (the side-task YAML, docs/sidetasks.md)
// RUN: not frenzy-opt %s -frenzy-place-side-tasks="side-tasks=%t.missing.yaml cluster=%src/examples/cpu-4.yaml" 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: {{.*}}missing.yaml: cannot read the side-task file: {{.*}}
// RUN: not frenzy-opt %s -frenzy-place-side-tasks="side-tasks=%inputs/sidetasks/mixed.yaml cluster=%src/examples/cpu-4.yaml time-margin=1.5" 2>&1 | FileCheck %s --check-prefix=MARGIN
// MARGIN: error: frenzy-place-side-tasks: memory-margin and time-margin must be in [0, 1)
// RUN: frenzy-opt %s -frenzy-place-side-tasks="side-tasks=%inputs/sidetasks/mixed.yaml cluster=%src/examples/cpu-4.yaml" 2>/dev/null > %t.placed.mlir
// RUN: not frenzy-opt %t.placed.mlir -frenzy-place-side-tasks="side-tasks=%inputs/sidetasks/mixed.yaml cluster=%t.nocluster.yaml" 2>&1 | FileCheck %s --check-prefix=NOCLUSTER
// NOCLUSTER: error: {{.*}}nocluster.yaml{{.*}}give cluster=FILE to use another path)

module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 2, tp = 1>, cluster = "cpu-4.yaml", global_batch = 8, micro_batch = 1, seq = 64, recompute = "selective", fixed_shares = true, pipelines = [<micro_batches = 2, sequences = 2, stage_seconds = 6.0, stages = [<node = 0, devices = [0], layers = [0, 0], embed = true, seconds = 3.0, peak_bytes = 1610612736, activation_bytes = 268435456>, <node = 0, devices = [1], layers = [1, 1], seconds = 6.0, peak_bytes = 1342177280, activation_bytes = 268435456>]>]>, frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 2, stages = [[F0 F1 B0 B1], [F0 B0 F1 B1]]>]>} {
}
