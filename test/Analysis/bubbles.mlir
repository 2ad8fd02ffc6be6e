// The bubble analysis on hand-written partitions and schedules: every idle
// interval of every stage in one step (start, length, the work that ends it,
// micro-batches held, memory free, why), then per stage and in total. Stage
// times are a micro-batch's forward + backward (forward one third); 3.0 s
// gives forward 1 s and backward 2 s exactly, so with uniform stages the
// bubble fraction must be (p - 1)/(m + p - 1) to the last printed digit.
// Memory: cpu ranks have 8 GiB; stage s of S holds 1 GiB + (S - s) x 256 MiB
// at its peak of S - s micro-batches in flight (1F1B).
// RUN: frenzy-opt %s -split-input-file -frenzy-print-bubbles="cluster=%src/examples/cpu-4.yaml" | FileCheck %s

// 1F1B, p = 4, m = 8: (p - 1)/(m + p - 1) = 3/11. Every stage idles
// (p - 1) x 3 s = 9 s of the 33 s step.
// CHECK-LABEL: bubbles: 1f1b, 1 pipeline(s), 4 stage(s), step 33000.000 ms
// Stage 0 runs 3 warm-up forwards and F3, then waits 6 s for B0 of stage 1
// (F3 on stages 1-3, then B0 on stages 3-1) holding 4 micro-batches: its
// peak of 2 GiB (1 GiB + 4 x 256 MiB), so 6 GiB free.
// CHECK-NEXT: p0 s0: at 4000.000 ms for 6000.000 ms before B0, 4 micro-batch(es) held, 6144.0 MiB free: waits for B0 of stage 1
// Stage 1 waits 1 s for stage 0's first forward, holding nothing: 8 GiB less
// its 1 GiB of static memory (1 GiB + 3 x 256 MiB at 3 in flight).
// CHECK: p0 s1: at 0.000 ms for 1000.000 ms before F0, 0 micro-batch(es) held, 7168.0 MiB free: warm-up: waits for F0 of stage 0
// CHECK: per stage:
// CHECK-NEXT: p0 s0 (cpu x1, rank 0): idle 9000.000 ms of 33000.000 ms (27.27%) in {{[0-9]+}} bubble(s)
// CHECK-NEXT: p0 s1 (cpu x1, rank 1): idle 9000.000 ms of 33000.000 ms (27.27%)
// CHECK-NEXT: p0 s2 (cpu x1, rank 2): idle 9000.000 ms of 33000.000 ms (27.27%)
// CHECK-NEXT: p0 s3 (cpu x1, rank 3): idle 9000.000 ms of 33000.000 ms (27.27%)
// CHECK-NEXT: total: {{[0-9]+}} bubble(s), bubble fraction 0.272727273; idle 36000.000 GPU-ms of 132000.000 GPU-ms
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 4, tp = 1>, cluster = "cpu-4.yaml", global_batch = 8, micro_batch = 1, seq = 64, recompute = "selective", fixed_shares = true, pipelines = [<micro_batches = 8, sequences = 8, stage_seconds = 3.0, stages = [<node = 0, devices = [0], layers = [0, 0], embed = true, seconds = 3.0, peak_bytes = 2147483648, activation_bytes = 268435456>, <node = 0, devices = [1], layers = [1, 1], seconds = 3.0, peak_bytes = 1879048192, activation_bytes = 268435456>, <node = 0, devices = [2], layers = [2, 2], seconds = 3.0, peak_bytes = 1610612736, activation_bytes = 268435456>, <node = 0, devices = [3], layers = [3, 3], seconds = 3.0, peak_bytes = 1342177280, activation_bytes = 268435456>]>]>, frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 8, stages = [[F0 F1 F2 F3 B0 F4 B1 F5 B2 F6 B3 F7 B4 B5 B6 B7], [F0 F1 F2 B0 F3 B1 F4 B2 F5 B3 F6 B4 F7 B5 B6 B7], [F0 F1 B0 F2 B1 F3 B2 F4 B3 F5 B4 F6 B5 F7 B6 B7], [F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5 F6 B6 F7 B7]]>]>} {
}
// -----
// 1F1B, p = 2, m = 4: 1/5.
// CHECK-LABEL: bubbles: 1f1b, 1 pipeline(s), 2 stage(s), step 15000.000 ms
// CHECK: total: {{[0-9]+}} bubble(s), bubble fraction 0.200000000;
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 2, tp = 1>, cluster = "cpu-4.yaml", global_batch = 8, micro_batch = 1, seq = 64, recompute = "selective", fixed_shares = true, pipelines = [<micro_batches = 4, sequences = 4, stage_seconds = 3.0, stages = [<node = 0, devices = [0], layers = [0, 0], embed = true, seconds = 3.0, peak_bytes = 1610612736, activation_bytes = 268435456>, <node = 0, devices = [1], layers = [1, 1], seconds = 3.0, peak_bytes = 1342177280, activation_bytes = 268435456>]>]>, frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 4, stages = [[F0 F1 B0 F2 B1 F3 B2 B3], [F0 B0 F1 B1 F2 B2 F3 B3]]>]>} {
}
// -----
// 1F1B, p = 4, m = 4: 3/7.
// CHECK-LABEL: bubbles: 1f1b, 1 pipeline(s), 4 stage(s), step 21000.000 ms
// CHECK: total: {{[0-9]+}} bubble(s), bubble fraction 0.428571429;
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 4, tp = 1>, cluster = "cpu-4.yaml", global_batch = 8, micro_batch = 1, seq = 64, recompute = "selective", fixed_shares = true, pipelines = [<micro_batches = 4, sequences = 4, stage_seconds = 3.0, stages = [<node = 0, devices = [0], layers = [0, 0], embed = true, seconds = 3.0, peak_bytes = 2147483648, activation_bytes = 268435456>, <node = 0, devices = [1], layers = [1, 1], seconds = 3.0, peak_bytes = 1879048192, activation_bytes = 268435456>, <node = 0, devices = [2], layers = [2, 2], seconds = 3.0, peak_bytes = 1610612736, activation_bytes = 268435456>, <node = 0, devices = [3], layers = [3, 3], seconds = 3.0, peak_bytes = 1342177280, activation_bytes = 268435456>]>]>, frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 4, stages = [[F0 F1 F2 F3 B0 B1 B2 B3], [F0 F1 F2 B0 F3 B1 B2 B3], [F0 F1 B0 F2 B1 F3 B2 B3], [F0 B0 F1 B1 F2 B2 F3 B3]]>]>} {
}
// -----
// GPipe, p = 4, m = 8: the same 3/11. Stage 0 runs its 8 forwards, then
// waits 9 s (stages 3, 2, 1 each run F7 or B0 after it) holding all 8
// micro-batches: its peak, 2 GiB, so 6 GiB free.
// CHECK-LABEL: bubbles: gpipe, 1 pipeline(s), 4 stage(s), step 33000.000 ms
// CHECK-NEXT: p0 s0: at 8000.000 ms for 9000.000 ms before B0, 8 micro-batch(es) held, 6144.0 MiB free: waits for B0 of stage 1
// CHECK: total: {{[0-9]+}} bubble(s), bubble fraction 0.272727273;
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 4, tp = 1>, cluster = "cpu-4.yaml", global_batch = 8, micro_batch = 1, seq = 64, recompute = "selective", fixed_shares = true, gpipe = true, pipelines = [<micro_batches = 8, sequences = 8, stage_seconds = 3.0, stages = [<node = 0, devices = [0], layers = [0, 0], embed = true, seconds = 3.0, peak_bytes = 2147483648, activation_bytes = 268435456>, <node = 0, devices = [1], layers = [1, 1], seconds = 3.0, peak_bytes = 2147483648, activation_bytes = 268435456>, <node = 0, devices = [2], layers = [2, 2], seconds = 3.0, peak_bytes = 2147483648, activation_bytes = 268435456>, <node = 0, devices = [3], layers = [3, 3], seconds = 3.0, peak_bytes = 2147483648, activation_bytes = 268435456>]>]>, frenzy.schedule = #frenzy.schedule<kind = "gpipe", pipelines = [<micro_batches = 8, stages = [[F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7], [F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7], [F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7], [F0 F1 F2 F3 F4 F5 F6 F7 B0 B1 B2 B3 B4 B5 B6 B7]]>]>} {
}
// -----
// Non-uniform 1F1B, p = 2, m = 2: stage 1 is twice as slow (forward 2 s,
// backward 4 s). Stage 0: F0 [0,1] F1 [1,2], waits [2,7] for B0 of stage 1
// (F0 [1,3], B0 [3,7]), B0 [7,9], waits [9,13] for B1 (F1 [7,9], B1
// [9,13]), B1 [13,15]. Stage 1: warm-up [0,1], then waits [13,15] for stage
// 0 before the reduction. Idle 9 + 3 of 2 x 15 s: 0.4.
// CHECK-LABEL: bubbles: 1f1b, 1 pipeline(s), 2 stage(s), step 15000.000 ms
// CHECK-NEXT: p0 s0: at 2000.000 ms for 5000.000 ms before B0, 2 micro-batch(es) held, {{.*}}: waits for B0 of stage 1
// CHECK-NEXT: p0 s0: at 9000.000 ms for 4000.000 ms before B1, 1 micro-batch(es) held, {{.*}}: waits for B1 of stage 1
// CHECK-NEXT: p0 s1: at 0.000 ms for 1000.000 ms before F0, 0 micro-batch(es) held, {{.*}}: warm-up: waits for F0 of stage 0
// CHECK-NEXT: p0 s1: at 13000.000 ms for 2000.000 ms before reduce, 0 micro-batch(es) held, {{.*}}: waits for p0 s0 (the last to finish its backwards) before the gradient reduction
// CHECK: total: 4 bubble(s), bubble fraction 0.400000000; idle 12000.000 GPU-ms of 30000.000 GPU-ms
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 2, tp = 1>, cluster = "cpu-4.yaml", global_batch = 8, micro_batch = 1, seq = 64, recompute = "selective", fixed_shares = true, pipelines = [<micro_batches = 2, sequences = 2, stage_seconds = 6.0, stages = [<node = 0, devices = [0], layers = [0, 0], embed = true, seconds = 3.0, peak_bytes = 1610612736, activation_bytes = 268435456>, <node = 0, devices = [1], layers = [1, 1], seconds = 6.0, peak_bytes = 1342177280, activation_bytes = 268435456>]>]>, frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 2, stages = [[F0 F1 B0 B1], [F0 B0 F1 B1]]>]>} {
}
// -----
// Two pipelines (DP): pipeline 0 (one stage, 2 x 3 s) ends at 6 s, pipeline
// 1 (one stage, 2 x 4.5 s) at 9 s; pipeline 0 waits 3 s for it before the
// 1 s gradient all-reduce and the 0.5 s optimizer: step 10.5 s.
// CHECK-LABEL: bubbles: 1f1b, 2 pipeline(s), 2 stage(s), step 10500.000 ms
// CHECK-NEXT: p0 s0: at 6000.000 ms for 3000.000 ms before reduce, 0 micro-batch(es) held, {{.*}}: waits for p1 s0 (the last to finish its backwards) before the gradient reduction
// CHECK: p0 s0 (cpu x1, rank 0): idle 3000.000 ms of 10500.000 ms (28.57%) in 1 bubble(s)
// CHECK-NEXT: p1 s0 (cpu x1, rank 1): idle 0.000 ms of 10500.000 ms (0.00%) in 0 bubble(s)
// CHECK-NEXT: total: 1 bubble(s), bubble fraction 0.142857143;
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 2, pp = 1, tp = 1>, cluster = "cpu-4.yaml", global_batch = 8, micro_batch = 1, seq = 64, recompute = "selective", fixed_shares = true, all_reduce_seconds = 1.0, optimizer_seconds = 0.5, pipelines = [<micro_batches = 2, sequences = 2, stage_seconds = 3.0, stages = [<node = 0, devices = [0], layers = [0, 0], embed = true, seconds = 3.0, peak_bytes = 1342177280, activation_bytes = 268435456>]>, <micro_batches = 2, sequences = 2, stage_seconds = 4.5, stages = [<node = 0, devices = [1], layers = [1, 1], seconds = 4.5, peak_bytes = 1342177280, activation_bytes = 268435456>]>]>, frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 2, stages = [[F0 B0 F1 B1]]>, <micro_batches = 2, stages = [[F0 B0 F1 B1]]>]>} {
}
// -----
// Recorded forward share and boundary transfer (frenzy-partition writes
// them): stage 0's 4 s are forward 1 s, backward 2 s and two 0.5 s
// transfers. F0 [0, 1], send [1, 1.5]; stage 1 receives [1.5, 2], F0
// [2, 3], B0 [3, 5], sends back [5, 5.5]; stage 0 receives [5.5, 6], B0
// [6, 8]. Each stage idles 4 s of the 8 s step (without the transfers 3 s
// of 6 s).
// CHECK-LABEL: bubbles: 1f1b, 1 pipeline(s), 2 stage(s), step 8000.000 ms
// CHECK-NEXT: p0 s0: at 1500.000 ms for 4000.000 ms before B0, 1 micro-batch(es) held, {{.*}}: waits for B0 of stage 1
// CHECK-NEXT: p0 s1: at 0.000 ms for 1500.000 ms before F0, 0 micro-batch(es) held, {{.*}}: warm-up: waits for F0 of stage 0
// CHECK-NEXT: p0 s1: at 5500.000 ms for 2500.000 ms before reduce,
// CHECK: p0 s0 (cpu x1, rank 0): idle 4000.000 ms of 8000.000 ms (50.00%)
// CHECK-NEXT: p0 s1 (cpu x1, rank 1): idle 4000.000 ms of 8000.000 ms (50.00%)
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 2, tp = 1>, cluster = "cpu-4.yaml", global_batch = 1, micro_batch = 1, seq = 64, recompute = "selective", fixed_shares = true, pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 4.0, stages = [<node = 0, devices = [0], layers = [0, 0], embed = true, seconds = 4.0, forward_seconds = 1.0, transfer_seconds = 0.5, peak_bytes = 1342177280, activation_bytes = 268435456>, <node = 0, devices = [1], layers = [1, 1], head = true, seconds = 3.0, forward_seconds = 1.0, peak_bytes = 1342177280, activation_bytes = 268435456>]>]>, frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 1, stages = [[F0 B0], [F0 B0]]>]>} {
}
// -----
// A tied weight: "wte" lives on stage 0 (the embedding) and the head's
// transpose on stage 1 reads it, so stage 1 sends its gradient (160 bytes)
// to stage 0 after each backward: within the node 10 us + 160 B / (80% of
// 25 GB/s) = 10.008 us at both ends. Stages: forward 10 us, backward 20 us.
// Stage 1: F0 [10, 20], B0 [20, 40], sends [40, 50.008]; stage 0 receives
// [50.008, 60.016], B0 [60.016, 80.016]: the step is 80 us (60 without the
// tied gradient).
// CHECK-LABEL: bubbles: 1f1b, 1 pipeline(s), 2 stage(s), step 0.080 ms
// CHECK-NEXT: p0 s0: at 0.010 ms for 0.040 ms before B0, 1 micro-batch(es) held, {{.*}}: waits for B0 of stage 1
// CHECK-NEXT: p0 s1: at 0.000 ms for 0.010 ms before F0,
// CHECK-NEXT: p0 s1: at 0.050 ms for 0.030 ms before reduce,
module attributes {frenzy.layout = #frenzy.layout<mesh = <dp = 1, pp = 2, tp = 1>, cluster = "cpu-4.yaml", global_batch = 1, micro_batch = 1, seq = 64, recompute = "selective", fixed_shares = true, pipelines = [<micro_batches = 1, sequences = 1, stage_seconds = 3.0e-05, stages = [<node = 0, devices = [0], layers = [0, -1], embed = true, seconds = 3.0e-05, peak_bytes = 1342177280, activation_bytes = 268435456>, <node = 0, devices = [1], layers = [0, -1], head = true, seconds = 3.0e-05, peak_bytes = 1342177280, activation_bytes = 268435456>]>]>, frenzy.schedule = #frenzy.schedule<kind = "1f1b", pipelines = [<micro_batches = 1, stages = [[F0 B0], [F0 B0]]>]>} {
  func.func @forward(%ids: tensor<2x3xi64>) -> tensor<4x10xf32> {
    %w = frenzy.param "wte" {storage = "inline", trainable, frenzy.placement = #frenzy.placement<pp = [0]>} : tensor<10x4xf32>
    %e = frenzy.gather %w, %ids {axis = 0 : i64, frenzy.placement = #frenzy.placement<pp = [0]>} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
    %wt = frenzy.transpose %w {perm = array<i64: 1, 0>, frenzy.placement = #frenzy.placement<pp = [1]>} : (tensor<10x4xf32>) -> tensor<4x10xf32>
    return %wt : tensor<4x10xf32>
  }
}
